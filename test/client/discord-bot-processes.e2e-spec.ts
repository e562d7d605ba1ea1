import { GatewayDispatchEvents } from 'discord.js';
import { shardOfGuild } from 'clients/bot-reporter/src';
import { reportDiscordBot, type DiscordBotReporting } from 'clients/bot-reporter/src/discord';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { createApiToken, loginAs } from 'test/support/auth';
import { eventually } from 'test/support/eventually';
import { useTestApp } from 'test/support/test-app';
// examples/ has no path alias (the example bot is not part of the service): imported by path.
// eslint-disable-next-line no-restricted-imports
import { BOT_USER, FakeGateway, guildCreateData } from '../../examples/discord-bot/fake-gateway';

const SHARDS = 2;
/** Made-up guild ids, two on each shard by Discord's sharding rule. */
const GUILDS = Array.from({ length: 16 }, (_, n) => String((263_000_000_000n + BigInt(n)) << 22n));
const on = (shardId: number): string[] =>
  GUILDS.filter((id) => shardOfGuild(id, SHARDS) === shardId).slice(0, 2);

/**
 * A bot split over two processes (a ShardingManager's, or clusters'): each process has its own
 * discord.js client running one of the two shards, and makes the one call on it. Nothing passes
 * between them; the service puts the shards together.
 */
describe('a discord.js bot in two processes, each reporting its own shard', () => {
  const app = useTestApp({ env: { DEMO_BOT_REPORTER: 'false' } });
  const processes: { gateway: FakeGateway; reporting: DiscordBotReporting }[] = [];
  let token: string;

  beforeAll(async () => {
    const login = (await loginAs(app(), DEMO_IDS.alice)).token;
    token = (await createApiToken(app(), login, { name: 'bot' })).token;
    for (const shardId of [0, 1]) {
      let reporting: DiscordBotReporting | undefined;
      const gateway = await FakeGateway.connect(
        SHARDS,
        (client) => {
          reporting = reportDiscordBot(client, {
            baseUrl: `http://127.0.0.1:${app().port}`,
            token,
            closeOn: [],
          });
        },
        [shardId],
      );
      processes.push({ gateway, reporting: reporting! });
    }
  });

  afterAll(async () => {
    // Already closed by the last test, unless it failed first.
    for (const { gateway } of processes) await gateway.destroy();
  });

  const internal = async (path: string): Promise<Record<string, unknown>> =>
    (await app().http().get(path).set('Authorization', `Bearer ${token}`).expect(200))
      .body as Record<string, unknown>;

  it('makes the feeds live and both shards Ready, from the two processes alone', async () => {
    for (const [shardId, { gateway }] of processes.entries()) {
      gateway.ready(shardId, BOT_USER, on(shardId), SHARDS);
      for (const id of on(shardId)) {
        gateway.dispatch(shardId, GatewayDispatchEvents.GuildCreate, guildCreateData(id, 5));
      }
    }
    for (const { reporting } of processes) await reporting.guildState.flush();

    const feed = await eventually(
      () => internal('/internal/bot-guilds'),
      (body) => body.live === true,
    );
    expect(feed).toMatchObject({ live: true, shard_count: SHARDS, guilds: 4 });
    expect(await internal('/internal/guild-state')).toMatchObject({ guilds: 4, live: 4 });
    const ready = (body: Record<string, unknown>): boolean => {
      const shards = Object.values(body.shard_conns as Record<string, { status: string }>);
      return shards.length === SHARDS && shards.every((shard) => shard.status === 'Ready');
    };
    const stats = await eventually(
      async () =>
        (await app().http().get('/bot-stats').expect(200)).body as Record<string, unknown>,
      ready,
    );
    expect(stats).toMatchObject({
      shard_conns: {
        '0': { status: 'Ready', guilds: 2 },
        '1': { status: 'Ready', guilds: 2 },
      },
      total_guilds: 4,
      total_users: 20,
    });
  });

  it('closes each process on its own: both shards reported Closed', async () => {
    for (const { gateway, reporting } of processes) {
      await gateway.destroy();
      await reporting.close();
    }
    const stats = await app().http().get('/bot-stats').expect(200);
    expect(stats.body).toMatchObject({
      shard_conns: { '0': { status: 'Closed' }, '1': { status: 'Closed' } },
    });
  });
});
