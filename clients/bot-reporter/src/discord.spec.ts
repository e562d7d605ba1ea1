import { GatewayDispatchEvents, type Client } from 'discord.js';
import {
  guildStateHash,
  shardOfGuild,
  type GuildEventBatch,
  type GuildStateBatch,
  type ReporterError,
  type ShardStats,
} from 'clients/bot-reporter/src';
import {
  guildState,
  reportDiscordBot,
  type DiscordBotReporting,
  type DiscordFeed,
} from 'clients/bot-reporter/src/discord';
import { eventually } from 'test/support/eventually';
// The fake gateway serves the repository's tests (examples/ has no path alias).
// eslint-disable-next-line no-restricted-imports
import { BOT_USER, FakeGateway, guildCreateData } from '../../../examples/discord-bot/fake-gateway';
// eslint-disable-next-line no-restricted-imports
import { fakeService, type Sent } from '../../../examples/discord-bot/fake-service';

const BOT = BOT_USER;
const SHARDS = 2;

/** Guild ids on each of the two shards, by Discord's sharding rule. */
const onShard = (shardId: number, count: number): string[] => {
  const ids: string[] = [];
  for (let n = 0n; ids.length < count; n += 1n) {
    const id = ((1100000000000000000n >> 22n) + n) << 22n;
    if (shardOfGuild(String(id), SHARDS) === shardId) ids.push(String(id));
  }
  return ids;
};
const [GUILD_A, JOINED] = onShard(0, 2);
const [GUILD_B] = onShard(1, 1);

const statsOf = (sent: Sent[], shardId: number): ShardStats[] =>
  sent
    .filter((entry) => entry.method === 'PUT' && entry.path === `/internal/shards/${shardId}`)
    .map((entry) => entry.body as ShardStats);

/**
 * The one call, on a real discord.js client over a fake gateway: a process running two shards
 * reports each one's guilds, what the bot sees there and its health, then a change and a join,
 * and at shutdown flushes and says the shards closed.
 */
describe('reportDiscordBot', () => {
  it('reports every shard the client runs: snapshot, guild state and stats, then changes, then its close', async () => {
    const service = fakeService();
    const errors: [DiscordFeed, ReporterError][] = [];
    let reporting: DiscordBotReporting | undefined;
    const gateway = await FakeGateway.connect(SHARDS, (client) => {
      reporting = reportDiscordBot(client, {
        baseUrl: 'http://bms.test',
        token: 'ara_secret',
        fetch: service.fetch,
        closeOn: [],
        onError: (error, feed) => errors.push([feed, error]),
      });
    });
    const { sent } = service;

    gateway.ready(0, BOT, [GUILD_A], SHARDS);
    gateway.dispatch(0, GatewayDispatchEvents.GuildCreate, guildCreateData(GUILD_A, 12));
    gateway.ready(1, BOT, [GUILD_B], SHARDS);
    gateway.dispatch(1, GatewayDispatchEvents.GuildCreate, guildCreateData(GUILD_B, 30));

    // Each shard's stats are sent as soon as it is ready, not at the next interval.
    const ready = (shardId: number): boolean => statsOf(sent, shardId).at(-1)?.status === 'Ready';
    await eventually(
      () => Promise.resolve(sent),
      () => ready(0) && ready(1),
    );
    expect(statsOf(sent, 0).at(-1)).toMatchObject({ status: 'Ready', guilds: 1, users: 12 });
    expect(statsOf(sent, 1).at(-1)).toMatchObject({ status: 'Ready', guilds: 1, users: 30 });
    const snapshots = sent.filter((entry) => entry.path.endsWith('/guilds'));
    expect(snapshots.map(({ path, body }) => [path, body])).toEqual([
      [
        '/internal/shards/0/guilds',
        expect.objectContaining({ shard_count: SHARDS, total: 1, guild_ids: [GUILD_A] }),
      ],
      [
        '/internal/shards/1/guilds',
        expect.objectContaining({ shard_count: SHARDS, total: 1, guild_ids: [GUILD_B] }),
      ],
    ]);

    // A change on shard 0 and a join on shard 1's neighbour: each on its own shard's stream.
    const client: Client = gateway.client;
    gateway.dispatch(0, GatewayDispatchEvents.GuildRoleCreate, {
      guild_id: GUILD_A,
      role: {
        id: String(BigInt(GUILD_A) + 2n),
        name: 'Moderator',
        permissions: '8192',
        position: 1,
        managed: false,
        color: 0,
        hoist: false,
        mentionable: false,
        flags: 0,
      },
    });
    gateway.dispatch(0, GatewayDispatchEvents.GuildCreate, guildCreateData(JOINED, 3));
    await reporting!.guildState.flush();
    await reporting!.membership.flush();

    const reports = (shardId: number): [string, string, string | undefined][] =>
      sent
        .filter((entry) => entry.path === `/internal/shards/${shardId}/guild-state`)
        .flatMap((entry) => (entry.body as GuildStateBatch).reports)
        .map((report) => [report.type, report.guild_id, report.hash]);
    const hashOf = (id: string): string =>
      guildStateHash(guildState(client.guilds.cache.get(id)!)!);
    expect(reports(0)).toEqual([
      ['guild_create', GUILD_A, expect.any(String)],
      ['role_upsert', GUILD_A, hashOf(GUILD_A)],
      ['guild_create', JOINED, hashOf(JOINED)],
    ]);
    expect(reports(1)).toEqual([['guild_create', GUILD_B, hashOf(GUILD_B)]]);
    const events = sent
      .filter((entry) => entry.path.endsWith('/guild-events'))
      .flatMap((entry) => (entry.body as GuildEventBatch).events);
    expect(events).toEqual([expect.objectContaining({ type: 'join', guild_id: JOINED })]);

    // Shutdown: the client first, then the feeds, which say the shards closed.
    await gateway.destroy();
    const before = sent.length;
    await reporting!.close();
    const last = sent.slice(before).filter((entry) => /^\/internal\/shards\/\d+$/.test(entry.path));
    expect(last.map(({ path, body }) => [path, (body as ShardStats).status]).sort()).toEqual([
      ['/internal/shards/0', 'Closed'],
      ['/internal/shards/1', 'Closed'],
    ]);
    expect(errors).toEqual([]);
  });

  it("says what to fix on the token's first refusal, with the feed it came from", async () => {
    const service = fakeService({
      status: 403,
      code: 'Restricted',
      message: "Only the bot's operators (ROOT_USERS) may use internal routes",
    });
    const errors: [DiscordFeed, ReporterError][] = [];
    let reporting: DiscordBotReporting | undefined;
    const gateway = await FakeGateway.connect(1, (client) => {
      reporting = reportDiscordBot(client, {
        baseUrl: 'http://bms.test',
        token: 'ara_not_root',
        fetch: service.fetch,
        closeOn: [],
        onError: (error, feed) => errors.push([feed, error]),
      });
    });
    gateway.ready(0, BOT, [GUILD_A], 1);
    gateway.dispatch(0, GatewayDispatchEvents.GuildCreate, guildCreateData(GUILD_A, 2));
    await eventually(
      () => Promise.resolve(errors),
      (seen) => new Set(seen.map(([feed]) => feed)).size === 3,
    );
    const shardStats = errors.find(([feed]) => feed === 'shard-stats')![1];
    expect(shardStats).toMatchObject({ kind: 'refused', status: 403, code: 'Restricted' });
    expect(shardStats.message).toMatch(
      /^PUT \/internal\/shards\/0: 403 Restricted: Only the bot's operators \(ROOT_USERS\) may use internal routes\. To fix: .*ROOT_USERS.*tokens:create --user <id>/,
    );
    await gateway.destroy();
    await reporting!.close().catch(() => undefined);
    // Each feed says it once: the refusals after the first say only what happened.
    const hints = errors.filter(([, error]) => error.message.includes('To fix'));
    expect(hints.map(([feed]) => feed).sort()).toEqual([
      'guild-state',
      'membership',
      'shard-stats',
    ]);
  });

  it('refuses a ShardingManager, saying where the call goes', () => {
    const manager = { spawn: () => undefined, broadcastEval: () => undefined, shards: new Map() };
    expect(() =>
      reportDiscordBot(manager as unknown as Client, { baseUrl: 'http://bms.test', token: 'x' }),
    ).toThrow(/in the file the manager spawns/);
  });
});
