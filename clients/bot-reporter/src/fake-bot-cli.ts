#!/usr/bin/env node
// `bms-fake-bot` (`npm run fake-bot` in the service's repository): plays a bot against a Bot
// Management Service until interrupted (docs/bot-developers.md). fake-bot.ts does the playing.

import { parseArgs } from 'node:util';
import { startFakeBot, type FakeBotOptions } from './fake-bot.js';
import { ReporterError } from './transport.js';

const USAGE = `Usage: bms-fake-bot [options]

Plays a Discord bot against a Bot Management Service: reports its shards' stats, its guilds and what
it sees in them, then makes a change every interval, and every third change is mangled on its way so
that the service's copy drifts and heals.

  --url <url>            the service (default $BMS_URL, else http://localhost:3000)
  --token <ara_…>        an API token of a ROOT_USERS user (default $BMS_TOKEN)
  --platform <api url>   read the bot's guilds from this platform API once: the demo's emulator, as
                         its "Demo mode" log line names it (http://127.0.0.1:<port>/api)
  --bot-token <token>    the platform's bot token (default $DISCORD_BOT_TOKEN, else demo-bot-token)
  --guilds <n>           without --platform: make up n guilds (default 3)
  --shards <n>           shards the bot runs, all played here (default 1)
  --every <seconds>      between two changes (default 15)
  --once                 one change and one healed drift, then stop
  --help                 this text`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      platform: { type: 'string' },
      'bot-token': { type: 'string' },
      guilds: { type: 'string' },
      shards: { type: 'string' },
      every: { type: 'string' },
      once: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help === true) {
    console.log(USAGE);
    return;
  }
  const token = values.token ?? process.env.BMS_TOKEN;
  if (token === undefined || token === '') {
    throw new UsageError(
      'Set BMS_TOKEN (or --token) to an API token of a ROOT_USERS user: `npm run cli -- tokens:create --user <id> --name bot` where the service runs (in demo mode, Alice: 1100000000000000011)',
    );
  }
  const world: FakeBotOptions['world'] =
    values.platform === undefined
      ? { guilds: whole('--guilds', values.guilds ?? '3') }
      : {
          platformUrl: values.platform,
          botToken: values['bot-token'] ?? process.env.DISCORD_BOT_TOKEN ?? 'demo-bot-token',
        };
  const bot = await startFakeBot({
    baseUrl: values.url ?? process.env.BMS_URL ?? 'http://localhost:3000',
    token,
    world,
    shardCount: whole('--shards', values.shards ?? '1'),
    changeEveryMs: whole('--every', values.every ?? '15') * 1000,
  });
  if (values.once === true) {
    await bot.change();
    await bot.change();
    await bot.change();
    await bot.stop();
    return;
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      bot.stop().then(
        () => process.exit(0),
        (error: unknown) => {
          console.error(`last reports failed: ${String(error)}`);
          process.exit(1);
        },
      );
    });
  }
}

class UsageError extends Error {}

function whole(name: string, value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) {
    throw new UsageError(`${name} must be a whole number from 1`);
  }
  return number;
}

main().catch((error: unknown) => {
  // One line: what went wrong and, for a refused token, what to fix (the reporter says it).
  const message =
    error instanceof UsageError || error instanceof ReporterError || error instanceof Error
      ? error.message
      : String(error);
  console.error(`bms-fake-bot: ${message}`);
  process.exit(1);
});
