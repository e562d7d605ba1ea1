// A discord.js v14 bot that keeps the Bot Management Service told about every shard it runs: its
// health, the guilds it is in and what it sees there, in one call (docs/bot-developers.md).
//
//   npm install discord.js /path/to/bot-management-service-bot-reporter-<version>.tgz
//   BMS_URL=http://localhost:3000 BMS_TOKEN=ara_… DISCORD_TOKEN=… node bot.mjs
//
// BMS_TOKEN is an API token of a user whose id is in the service's ROOT_USERS. Run as it is, the
// process runs every shard Discord recommends; sharded.mjs runs the same file in several processes.

import { Client, GatewayIntentBits } from 'discord.js';
import { reportDiscordBot } from '@bot-management-service/bot-reporter/discord';

const { BMS_URL = 'http://localhost:3000', BMS_TOKEN, DISCORD_TOKEN } = process.env;
if (!BMS_TOKEN || !DISCORD_TOKEN) {
  console.error('Set BMS_TOKEN (an API token of a ROOT_USERS user) and DISCORD_TOKEN.');
  process.exit(1);
}

// Guilds is the one intent the feeds need, and it is not privileged.
const client = new Client({ intents: [GatewayIntentBits.Guilds] });

// Before login, so that no dispatch is missed. On SIGINT or SIGTERM it destroys the client and
// sends what is left before the process ends.
reportDiscordBot(client, { baseUrl: BMS_URL, token: BMS_TOKEN });

await client.login(DISCORD_TOKEN);
