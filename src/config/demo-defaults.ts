/**
 * Values used when the service runs in demo mode (no `DISCORD_BOT_TOKEN`): they match the seed of the
 * built-in chat-platform emulator, so the OAuth2 flow and `GET /config` work out of the box.
 */
export const DEMO_DEFAULTS = {
  clientId: '1100000000000000001',
  clientSecret: 'demo-client-secret',
  mainServer: '1100000000000000100',
  supportServerInvite: 'https://discord.gg/demo',
} as const;
