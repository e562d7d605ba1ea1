// Reports the bot's gateway shards to the Bot Management Service (PUT /internal/shards/{id}).
//
// Run beside the bot with an API token of a ROOT_USERS user:
//   BMS_URL=https://bms.example BMS_TOKEN=ara_… node examples/shard-reporter.mjs
// `--once` reports once and exits; without it, it reports every 30 s (the service shows a shard
// silent for over 2 minutes as Unknown). `--demo` reports two made-up shards.
//
// In a real bot, replace `readShards` with your library's shard state. With discord.js:
//   client.ws.shards.map((shard) => ({
//     id: shard.id,
//     status: shard.status === Status.Ready ? 'Ready' : 'Connecting',
//     real_latency: shard.ping >= 0 ? shard.ping : null,
//     guilds: client.guilds.cache.filter((g) => g.shardId === shard.id).size,
//     users: client.guilds.cache
//       .filter((g) => g.shardId === shard.id)
//       .reduce((sum, g) => sum + g.memberCount, 0),
//     uptime: Math.floor((Date.now() - connectedAt[shard.id]) / 1000),
//     total_uptime: Math.floor(process.uptime()),
//   }))

const INTERVAL_MS = 30_000;
const startedAt = Date.now();

function readShards() {
  const uptime = Math.floor((Date.now() - startedAt) / 1000);
  return [
    {
      id: 0,
      status: 'Ready',
      real_latency: 41,
      guilds: 1250,
      users: 61_000,
      uptime,
      total_uptime: uptime,
    },
    {
      id: 1,
      status: 'Ready',
      real_latency: null,
      guilds: 1190,
      users: 58_500,
      uptime,
      total_uptime: uptime,
    },
  ];
}

async function reportShard(baseUrl, token, { id, ...report }) {
  const response = await fetch(`${baseUrl}/internal/shards/${id}`, {
    method: 'PUT',
    headers: { Authorization: token, 'Content-Type': 'application/json' },
    body: JSON.stringify(report),
    signal: AbortSignal.timeout(5_000),
  });
  if (!response.ok) {
    const error = await response.json().catch(() => ({}));
    throw new Error(`shard ${id}: ${response.status} ${error.code ?? ''} ${error.message ?? ''}`);
  }
}

async function reportAll(baseUrl, token) {
  const shards = readShards();
  const results = await Promise.allSettled(shards.map((s) => reportShard(baseUrl, token, s)));
  for (const result of results) {
    if (result.status === 'rejected') console.error(`report failed: ${result.reason.message}`);
  }
  const reported = results.filter((result) => result.status === 'fulfilled').length;
  if (reported > 0) {
    console.log(
      `${new Date().toISOString()} reported ${reported} of ${shards.length} shards to ${baseUrl}`,
    );
  }
  return reported === shards.length;
}

const baseUrl = (process.env.BMS_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const token = process.env.BMS_TOKEN;
if (!token) {
  console.error('Set BMS_TOKEN to an API token of a ROOT_USERS user.');
  process.exit(1);
}
if (!process.argv.includes('--demo')) {
  console.error("Replace readShards() with your bot library's shard state, then drop --demo.");
  process.exit(1);
}
if (process.argv.includes('--once')) {
  process.exit((await reportAll(baseUrl, token)) ? 0 : 1);
}
await reportAll(baseUrl, token);
setInterval(() => void reportAll(baseUrl, token), INTERVAL_MS);
