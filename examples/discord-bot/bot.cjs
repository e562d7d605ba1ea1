// bot.mjs as CommonJS: the same one call, required rather than imported.
//
//   BMS_URL=http://localhost:3000 BMS_TOKEN=ara_… DISCORD_TOKEN=… node bot.cjs

const { Client, GatewayIntentBits } = require('discord.js');
const { reportDiscordBot } = require('@bot-management-service/bot-reporter/discord');

const { BMS_URL = 'http://localhost:3000', BMS_TOKEN, DISCORD_TOKEN } = process.env;
if (!BMS_TOKEN || !DISCORD_TOKEN) {
  console.error('Set BMS_TOKEN (an API token of a ROOT_USERS user) and DISCORD_TOKEN.');
  process.exit(1);
}

const client = new Client({ intents: [GatewayIntentBits.Guilds] });
reportDiscordBot(client, { baseUrl: BMS_URL, token: BMS_TOKEN });

client.login(DISCORD_TOKEN).catch((error) => {
  console.error('login failed:', error);
  process.exitCode = 1;
  client.destroy();
});
