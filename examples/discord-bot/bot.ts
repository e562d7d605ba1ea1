// A minimal discord.js v14 bot that keeps the Bot Management Service told which guilds it is in
// (membership.ts) and what it sees there (guild-state.ts).
//
//   BMS_URL=https://bms.example BMS_TOKEN=ara_… DISCORD_TOKEN=… <your TypeScript runner> bot.ts
//
// BMS_TOKEN is an API token of a ROOT_USERS user. In this repository the file is type-checked
// (npm run typecheck) and imports the reporter through the `clients/` path alias; in a bot's own
// repository, install the package (clients/bot-reporter/README.md says how) and import it as
// `@bot-management-service/bot-reporter`.

import { Client, GatewayIntentBits } from 'discord.js';
import { createGuildStateReporter, createMembershipReporter } from 'clients/bot-reporter/src';
import { fullStateFrom, reportGuildState } from './guild-state.js';
import { reportMembership } from './membership.js';

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    console.error(`Set ${name}.`);
    process.exit(1);
  }
  return value;
}

// Guilds is the one intent both feeds need: it brings READY's guild list, GUILD_CREATE and
// GUILD_DELETE, the role, channel and thread events, and the bot's own GUILD_MEMBER_UPDATE.
const client = new Client({ intents: [GatewayIntentBits.Guilds] });

const baseUrl = process.env.BMS_URL ?? 'http://localhost:3000';
const token = requiredEnv('BMS_TOKEN');
const membership = createMembershipReporter({
  baseUrl,
  token,
  onError: (error) => console.error(`membership feed: ${error.message}`),
});
const guildState = createGuildStateReporter({
  baseUrl,
  token,
  // The service's resyncs are answered from discord.js's cache.
  fullState: fullStateFrom(client),
  onError: (error) => console.error(`guild-state feed: ${error.kind}: ${error.message}`),
});
reportMembership(client, membership);
reportGuildState(client, guildState);

async function shutdown(): Promise<void> {
  // The client first, so that no event arrives after the reporters' last flush.
  await client.destroy();
  const closing = [membership.close(), guildState.close()];
  for (const result of await Promise.allSettled(closing)) {
    if (result.status === 'rejected') console.error('last flush failed:', result.reason);
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void shutdown());
}

client.login(requiredEnv('DISCORD_TOKEN')).catch((error: unknown) => {
  console.error('login failed:', error);
  process.exitCode = 1;
  void membership.close();
  void guildState.close();
});
