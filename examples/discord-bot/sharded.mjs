// A bot whose shards run in several processes: discord.js's ShardingManager spawns bot.mjs once per
// shard (or per `shardList` slice), and each process reports its own shards with the same call.
// Nothing passes between the processes: the service puts the shards together.
//
//   BMS_URL=http://localhost:3000 BMS_TOKEN=ara_… DISCORD_TOKEN=… node sharded.mjs
//
// Clusters of shards per process (discord-hybrid-sharding and the like) are the same: call
// reportDiscordBot() in the cluster's file, on its client.

import { fileURLToPath } from 'node:url';
import { ShardingManager } from 'discord.js';

const manager = new ShardingManager(fileURLToPath(new URL('./bot.mjs', import.meta.url)), {
  token: process.env.DISCORD_TOKEN,
  totalShards: 'auto',
});
manager.on('shardCreate', (shard) => console.log(`shard ${shard.id} spawned`));
await manager.spawn();
