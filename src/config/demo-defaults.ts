/**
 * Values used when the service runs in demo mode (no `DISCORD_BOT_TOKEN`): they match the seed of the
 * built-in chat-platform emulator, so the OAuth2 flow and `GET /config` work out of the box.
 */
export const DEMO_DEFAULTS = {
  clientId: '1100000000000000001',
  clientSecret: 'demo-client-secret',
  mainServer: '1100000000000000100',
  /** Whom `GET /demo/oauth2-code` logs in by default: the owner of the main server, a root user. */
  login: '1100000000000000011',
  supportServerInvite: 'https://discord.gg/demo',
} as const;
