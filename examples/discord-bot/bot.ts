// A minimal discord.js v14 bot that keeps the Bot Management Service told which guilds it is in.
//
//   BMS_URL=https://bms.example BMS_TOKEN=ara_… DISCORD_TOKEN=… <your TypeScript runner> bot.ts
//
// BMS_TOKEN is an API token of a ROOT_USERS user. In this repository the file is type-checked
// (npm run typecheck) and imports the reporter through the `clients/` path alias; in a bot's own
// repository, install the package (clients/bot-reporter/README.md says how) and import it as
// `@bot-management-service/bot-reporter`.

import { Client, GatewayIntentBits } from 'discord.js';
import { createMembershipReporter } from 'clients/bot-reporter/src';
import { reportMembership } from './membership';

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    console.error(`Set ${name}.`);
    process.exit(1);
  }
  return value;
}

const reporter = createMembershipReporter({
  baseUrl: process.env.BMS_URL ?? 'http://localhost:3000',
  token: requiredEnv('BMS_TOKEN'),
  onError: (error) => console.error(`membership feed: ${error.message}`),
});

// Guilds is the one intent the feed needs: it brings READY's guild list, GUILD_CREATE and
// GUILD_DELETE.
const client = new Client({ intents: [GatewayIntentBits.Guilds] });
reportMembership(client, reporter);

async function shutdown(): Promise<void> {
  // The client first, so that no event arrives after the reporter's last flush.
  await client.destroy();
  await reporter.close().catch((error: unknown) => console.error('last flush failed:', error));
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void shutdown());
}

client.login(requiredEnv('DISCORD_TOKEN')).catch((error: unknown) => {
  console.error('login failed:', error);
  process.exitCode = 1;
  void reporter.close();
});
