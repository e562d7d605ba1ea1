import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Test } from 'supertest';
import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import type { EmulatorSeed } from 'src/platform/emulator/emulator.seed';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { BotGuildsFeedService, SHARD_EXPIRY_MS } from 'src/bot-reports/bot-guilds-feed.service';
import { BotMembershipService } from 'src/bot-reports/bot-membership.service';
import { databaseOf, signInAsRoot } from 'test/support/auth';
import { botAndAliceGuild, liveModeEnv, useEmulator } from 'test/support/platform';
import { createTestApp, type TestApp } from 'test/support/test-app';
import { createTestDatabase } from 'test/support/test-database';
import { describeShared, useTwoInstances } from 'test/support/two-instances';

/** Guilds Alice is in beside the demo ones; the bot is in all of them. */
const EXTRA = ['1100000000000000400', '1100000000000000500', '1100000000000000600'];
const SEED: EmulatorSeed = {
  ...DEMO_SEED,
  guilds: [...DEMO_SEED.guilds, ...EXTRA.map(botAndAliceGuild)],
};
/** Every guild the bot is in, by the seed. */
const BOT_GUILDS = [DEMO_IDS.community, DEMO_IDS.botLab, ...EXTRA];

const at = (offsetMs: number): string => new Date(Date.now() + offsetMs).toISOString();

/** Calls about membership: the bot's own guild list. */
const membershipCalls = (emulator: PlatformEmulator): number =>
  emulator.requests.filter(
    (request) => request.route === 'GET /users/@me/guilds' && request.auth === 'bot',
  ).length;

interface Feed {
  app: TestApp;
  /** Alice's login session (a dashboard user and, in this setup, a root user). */
  login: string;
  /** Alice's API token: what the bot's processes report with. */
  bot: string;
}

async function signIn(app: TestApp, emulator: PlatformEmulator): Promise<Feed> {
  return { app, ...(await signInAsRoot(app, emulator)) };
}

function snapshot(feed: Feed, shardId: number, body: Record<string, unknown>): Test {
  return feed.app
    .http()
    .put(`/internal/shards/${shardId}/guilds`)
    .set('Authorization', `Bearer ${feed.bot}`)
    .send(body);
}

function events(feed: Feed, shardId: number, list: unknown[]): Test {
  return feed.app
    .http()
    .post(`/internal/shards/${shardId}/guild-events`)
    .set('Authorization', `Bearer ${feed.bot}`)
    .send({ events: list });
}

async function botInGuilds(feed: Feed): Promise<string[]> {
  const res = await feed.app
    .http()
    .get('/users/@me/guilds')
    .set('Authorization', `Bearer ${feed.login}`)
    .expect(200);
  return res.body.bot_in_guilds as string[];
}

/** `GET /internal/bot-guilds`, as the bot's token reads it. */
const feedStatus = (feed: Feed): Test =>
  feed.app
    .http()
    .get('/internal/bot-guilds')
    .set('Authorization', `Bearer ${feed.bot}`)
    .expect(200);

const settingsOf = (feed: Feed, guildId: string): Test =>
  feed.app.http().get(`/guilds/${guildId}/settings`).set('Authorization', `Bearer ${feed.login}`);

describe('the membership feed (a bot reporting its guilds)', () => {
  const platform = useEmulator(SEED);
  let feed: Feed;

  beforeAll(async () => {
    const app = await createTestApp({
      env: { ...liveModeEnv(platform()), ROOT_USERS: DEMO_IDS.alice },
    });
    feed = await signIn(app, platform());
  });
  afterAll(() => feed.app.close());

  it('is not live before a snapshot', async () => {
    const res = await feedStatus(feed);
    expect(res.body).toEqual({
      live: false,
      shard_count: null,
      stale_after: 120,
      guilds: 0,
      shards: [],
    });
  });

  it('takes a snapshot in parts, in any order, and goes live once every id has arrived', async () => {
    const snapshotAt = at(-60_000);
    const body = { shard_count: 1, snapshot_at: snapshotAt, total: BOT_GUILDS.length };
    const first = await snapshot(feed, 0, { ...body, guild_ids: BOT_GUILDS.slice(2) }).expect(200);
    expect(first.body).toEqual({
      shard_id: 0,
      snapshot_at: snapshotAt,
      received: 3,
      total: 5,
      complete: false,
    });
    // A part sent again counts once; the feed is not live on a partial snapshot.
    await snapshot(feed, 0, { ...body, guild_ids: BOT_GUILDS.slice(2) }).expect(200);
    const partial = await feedStatus(feed);
    expect(partial.body.live).toBe(false);
    const last = await snapshot(feed, 0, { ...body, guild_ids: BOT_GUILDS.slice(0, 2) }).expect(
      200,
    );
    expect(last.body).toMatchObject({ received: 5, total: 5, complete: true });
    const status = await feedStatus(feed);
    expect(status.body).toMatchObject({ live: true, shard_count: 1, guilds: 5 });
    expect(status.body.shards).toEqual([
      {
        shard_id: 0,
        guilds: 5,
        snapshot_at: snapshotAt,
        reported_at: expect.any(String),
        live: true,
      },
    ]);
  });

  it('answers membership from the feed alone: no call about it, even for invented ids', async () => {
    const before = membershipCalls(platform());
    expect(await botInGuilds(feed)).toEqual(
      [DEMO_IDS.community, DEMO_IDS.botLab, ...EXTRA].filter((id) => id !== DEMO_IDS.botLab),
    );
    await settingsOf(feed, EXTRA[0]).expect(200);
    const perGuild = platform().countRequests('GET /guilds/:guild_id');
    for (const invented of ['1', '1100000000000000401', DEMO_IDS.sandbox]) {
      await settingsOf(feed, invented).expect(404);
    }
    expect(platform().countRequests('GET /guilds/:guild_id')).toBe(perGuild);
    expect(membershipCalls(platform())).toBe(before);
  });

  it('applies joins and leaves, and serves a joined guild on the first request', async () => {
    const joined = '1100000000000000700';
    platform().state.addGuild(botAndAliceGuild(joined));
    await settingsOf(feed, joined).expect(404);
    const res = await events(feed, 0, [{ type: 'join', guild_id: joined, at: at(0) }]).expect(200);
    expect(res.body).toEqual({ applied: 1, ignored: 0 });
    await settingsOf(feed, joined).expect(200);
    await feed.app
      .http()
      .get(`/users/@me/guilds/${joined}`)
      .set('Authorization', `Bearer ${feed.login}`)
      .expect(200);

    await events(feed, 0, [{ type: 'leave', guild_id: joined, at: at(1) }]).expect(200);
    await settingsOf(feed, joined).expect(404);
  });

  it('never lets a late report bring back a guild left after it', async () => {
    const guild = EXTRA[1];
    const leftAt = at(-1_000);
    await events(feed, 0, [{ type: 'leave', guild_id: guild, at: leftAt }]).expect(200);
    expect(await botInGuilds(feed)).not.toContain(guild);
    // A join the bot saw before the leave, arriving late, and the same leave replayed: ignored.
    const late = await events(feed, 0, [
      { type: 'join', guild_id: guild, at: at(-5_000) },
      { type: 'leave', guild_id: EXTRA[1], at: leftAt },
    ]).expect(200);
    expect(late.body).toEqual({ applied: 0, ignored: 2 });
    // Older than anything remembered (left guilds are forgotten after 7 days): ignored too.
    const ancient = await events(feed, 0, [
      { type: 'join', guild_id: guild, at: at(-8 * 24 * 3_600_000) },
    ]).expect(200);
    expect(ancient.body).toEqual({ applied: 0, ignored: 1 });
    // An older snapshot replayed whole, listing the guild: it stays left.
    const replay = await snapshot(feed, 0, {
      shard_count: 1,
      snapshot_at: at(-60_000),
      total: BOT_GUILDS.length,
      guild_ids: BOT_GUILDS,
    }).expect(200);
    expect(replay.body.complete).toBe(true);
    expect(await botInGuilds(feed)).not.toContain(guild);
    await settingsOf(feed, guild).expect(404);
  });

  it('keeps a guild joined after a newer snapshot was taken, and drops those it does not list', async () => {
    const joinedLater = '1100000000000000800';
    platform().state.addGuild(botAndAliceGuild(joinedLater));
    const snapshotAt = at(-500);
    await events(feed, 0, [{ type: 'join', guild_id: joinedLater, at: at(0) }]).expect(200);
    // READY came before the join: the snapshot does not list it, nor EXTRA[2] (left meanwhile).
    const listed = [DEMO_IDS.community, DEMO_IDS.botLab, EXTRA[0]];
    await snapshot(feed, 0, {
      shard_count: 1,
      snapshot_at: snapshotAt,
      total: listed.length,
      guild_ids: listed,
    }).expect(200);
    await settingsOf(feed, joinedLater).expect(200);
    await settingsOf(feed, EXTRA[2]).expect(404);
    await settingsOf(feed, EXTRA[0]).expect(200);
  });

  it('marks a guild left at once when the platform refuses it', async () => {
    // The bot was removed without the feed hearing of it yet.
    platform().state.removeMember(EXTRA[0], DEMO_IDS.bot);
    await feed.app
      .http()
      .get(`/users/@me/guilds/${EXTRA[0]}`)
      .set('Authorization', `Bearer ${feed.login}`)
      .expect(404);
    expect(await botInGuilds(feed)).not.toContain(EXTRA[0]);
    const status = await feedStatus(feed);
    expect(status.body.guilds).toBe(3);
  });

  it('refuses what a bot must not send, naming the field', async () => {
    const cases: [Test, string][] = [
      [
        snapshot(feed, 0, { shard_count: 2, snapshot_at: at(0), total: 1, guild_ids: ['4194304'] }),
        'guild 4194304 belongs to shard 1 of 2, not 0',
      ],
      [
        snapshot(feed, 2, { shard_count: 2, snapshot_at: at(0), total: 0, guild_ids: [] }),
        'shard_count must be above the shard id (2)',
      ],
      [
        snapshot(feed, 0, { shard_count: 1, snapshot_at: at(0), total: 1, guild_ids: ['1', '2'] }),
        'guild_ids holds 2 ids, more than total (1)',
      ],
      [
        snapshot(feed, 0, { shard_count: 1, snapshot_at: at(600_000), total: 0, guild_ids: [] }),
        "snapshot_at is more than 5 minutes ahead of the service's clock",
      ],
      [
        snapshot(feed, 0, {
          shard_count: 1,
          snapshot_at: at(-8 * 24 * 3_600_000),
          total: 0,
          guild_ids: [],
        }),
        'snapshot_at is more than 7 days old',
      ],
      [
        snapshot(feed, 0, { snapshot_at: at(0), total: 0, guild_ids: [] }),
        'shard_count is required',
      ],
      [
        snapshot(feed, 0, { shard_count: 1, snapshot_at: 'yesterday', total: 0, guild_ids: [] }),
        'snapshot_at must be an ISO 8601 date and time',
      ],
      [
        snapshot(feed, 0, {
          shard_count: 1,
          snapshot_at: at(0),
          total: 5_000,
          guild_ids: Array.from({ length: 4_001 }, (_, i) => String(i + 1)),
        }),
        'guild_ids must hold at most 4000 ids; send a larger snapshot in parts',
      ],
      [events(feed, 0, [{ type: 'gone', guild_id: '1', at: at(0) }]), 'type must be join or leave'],
      [
        events(feed, 0, [{ type: 'join', guild_id: 'x', at: at(0) }]),
        'guild_id must be a snowflake',
      ],
    ];
    for (const [request, message] of cases) {
      const res = await request.expect(400);
      expect(res.body.code).toBe('BadRequest');
      expect(JSON.stringify(res.body.details)).toContain(message);
    }
  });

  it('is for the API tokens of root users only', async () => {
    const body = { shard_count: 1, snapshot_at: at(0), total: 0, guild_ids: [] };
    // A login session, even a root user's.
    await feed.app
      .http()
      .put('/internal/shards/0/guilds')
      .set('Authorization', `Bearer ${feed.login}`)
      .send(body)
      .expect(403);
    await feed.app.http().put('/internal/shards/0/guilds').send(body).expect(401);
    await feed.app
      .http()
      .post('/internal/shards/0/guild-events')
      .set('Authorization', 'Bearer ara_nonsense')
      .send({ events: [] })
      .expect(401);
  });
});

describe('the membership feed across a restart', () => {
  const platform = useEmulator(SEED);

  it('is read back from the database: live at once, with no call about membership', async () => {
    // On the embedded engine, a data directory both instances open in turn.
    const dataDir = mkdtempSync(join(tmpdir(), 'bms-feed-'));
    const shared = await createTestDatabase();
    const env = {
      ...liveModeEnv(platform()),
      ROOT_USERS: DEMO_IDS.alice,
      ...(shared.engine === 'pglite' ? { DATABASE_URL: undefined, DATA_DIR: dataDir } : {}),
    };
    const database = { ...shared, drop: () => Promise.resolve() };
    const first = await createTestApp({ env, database });
    try {
      const feed = await signIn(first, platform());
      await snapshot(feed, 0, {
        shard_count: 1,
        snapshot_at: at(0),
        total: 2,
        guild_ids: [DEMO_IDS.community, EXTRA[0]],
      }).expect(200);
    } finally {
      await first.app.close();
    }
    const second = await createTestApp({ env, database });
    try {
      const feed = await signIn(second, platform());
      const before = membershipCalls(platform());
      expect(await botInGuilds(feed)).toEqual([DEMO_IDS.community, EXTRA[0]]);
      await settingsOf(feed, EXTRA[1]).expect(404);
      expect(membershipCalls(platform())).toBe(before);
    } finally {
      await second.close();
      await shared.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a feed that is not live', () => {
  const platform = useEmulator(SEED);
  let feed: Feed;

  beforeAll(async () => {
    const app = await createTestApp({
      env: { ...liveModeEnv(platform()), ROOT_USERS: DEMO_IDS.alice },
    });
    feed = await signIn(app, platform());
  });
  afterAll(() => feed.app.close());

  it('with a shard missing, leaves what it lacks to the platform', async () => {
    // Two shards; only shard 0 reports (EXTRA[0] is on shard 0 of 2 by its id; the others not).
    const onShard0 = BOT_GUILDS.filter((id) => Number((BigInt(id) >> 22n) % 2n) === 0);
    await snapshot(feed, 0, {
      shard_count: 2,
      snapshot_at: at(0),
      total: onShard0.length,
      guild_ids: onShard0,
    }).expect(200);
    const status = await feedStatus(feed);
    expect(status.body.live).toBe(false);
    expect(status.body.shards).toEqual([
      expect.objectContaining({ shard_id: 0, live: true }),
      { shard_id: 1, guilds: 0, snapshot_at: null, reported_at: null, live: false },
    ]);
    // Every guild of the bot is served; those the feed lacks after one cheap check each.
    const before = membershipCalls(platform());
    for (const id of BOT_GUILDS) await settingsOf(feed, id).expect(200);
    const checks = membershipCalls(platform()) - before;
    expect(checks).toBe(BOT_GUILDS.length - onShard0.length);
  });
});

describeShared('the membership feed on two instances', () => {
  const platform = useEmulator(SEED);
  const apps = useTwoInstances(() => ({
    ...liveModeEnv(platform()),
    ROOT_USERS: DEMO_IDS.alice,
    REDIS_KEY_PREFIX: `feed-${Date.now()}:`,
  }));

  it('reaches the other instance at once', async () => {
    const [a, b] = apps();
    const onA = await signIn(a, platform());
    const onB = { ...onA, app: b };
    await snapshot(onA, 0, {
      shard_count: 1,
      snapshot_at: at(-1_000),
      total: 1,
      guild_ids: [DEMO_IDS.community],
    }).expect(200);
    const joined = EXTRA[2];
    await events(onA, 0, [{ type: 'join', guild_id: joined, at: at(0) }]).expect(200);
    // Redis tells B at once; give the message a moment, far below the 5 s poll.
    await sleep(200);
    const before = membershipCalls(platform());
    await settingsOf(onB, joined).expect(200);
    expect(await botInGuilds(onB)).toEqual([DEMO_IDS.community, joined]);
    await events(onA, 0, [{ type: 'leave', guild_id: joined, at: at(1) }]).expect(200);
    await sleep(200);
    await settingsOf(onB, joined).expect(404);
    expect(membershipCalls(platform())).toBe(before);
  });
});

describe('a feed whose shard stops reporting', () => {
  const platform = useEmulator(SEED);
  let feed: Feed;

  beforeAll(async () => {
    const app = await createTestApp({
      env: { ...liveModeEnv(platform()), ROOT_USERS: DEMO_IDS.alice, BOT_FEED_STALE_AFTER: '10' },
    });
    feed = await signIn(app, platform());
  });
  afterAll(() => feed.app.close());

  it('is no longer trusted after BOT_FEED_STALE_AFTER, and is again after a report', async () => {
    await snapshot(feed, 0, {
      shard_count: 1,
      snapshot_at: at(0),
      total: 1,
      guild_ids: [DEMO_IDS.community],
    }).expect(200);
    const before = membershipCalls(platform());
    // Live: a guild the feed lacks is refused without asking.
    await settingsOf(feed, EXTRA[0]).expect(404);
    expect(membershipCalls(platform())).toBe(before);

    await sleep(10_500);
    const stale = await feedStatus(feed);
    expect(stale.body).toMatchObject({ live: false, stale_after: 10 });
    // No longer live: the platform is asked, and the guild the bot is in is served.
    await settingsOf(feed, EXTRA[0]).expect(200);
    expect(membershipCalls(platform())).toBe(before + 1);

    // A heartbeat (an empty batch) makes it live again.
    await events(feed, 0, []).expect(200);
    await settingsOf(feed, EXTRA[1]).expect(404);
    expect(membershipCalls(platform())).toBe(before + 1);
  }, 30_000);
});

describe('the membership feed under resharding and races', () => {
  const platform = useEmulator(SEED);
  let feed: Feed;

  beforeAll(async () => {
    const app = await createTestApp({
      env: { ...liveModeEnv(platform()), ROOT_USERS: DEMO_IDS.alice },
    });
    feed = await signIn(app, platform());
  });
  afterAll(() => feed.app.close());

  /** Guild ids 2^22 apart: each on the other shard of two. (The feed alone answers for them.) */
  const GUILDS = Array.from({ length: 6 }, (_, k) =>
    (1_100_000_000_000_000_000n + BigInt(k) * 4_194_304n).toString(),
  );
  const onShard = (shard: number, count: number): string[] =>
    GUILDS.filter((id) => Number((BigInt(id) >> 22n) % BigInt(count)) === shard);
  const held = async (): Promise<string[]> => {
    const ids: string[] = [];
    for (const id of GUILDS) {
      const res = await settingsOf(feed, id);
      if (res.status === 200) ids.push(id);
    }
    return ids;
  };

  it('loses no guild when the shard count grows and the new shards report out of order', async () => {
    expect(onShard(0, 2).length).toBeGreaterThan(0);
    expect(onShard(1, 2).length).toBeGreaterThan(0);
    await snapshot(feed, 0, {
      shard_count: 1,
      snapshot_at: at(-10_000),
      total: GUILDS.length,
      guild_ids: GUILDS,
    }).expect(200);
    // Resharded to 2: shard 0's READY came after shard 1's, but is processed first.
    await snapshot(feed, 0, {
      shard_count: 2,
      snapshot_at: at(-1_000),
      total: onShard(0, 2).length,
      guild_ids: onShard(0, 2),
    }).expect(200);
    await snapshot(feed, 1, {
      shard_count: 2,
      snapshot_at: at(-2_000),
      total: onShard(1, 2).length,
      guild_ids: onShard(1, 2),
    }).expect(200);
    const status = await feedStatus(feed);
    expect(status.body).toMatchObject({ live: true, shard_count: 2 });
    expect((await held()).sort()).toEqual([...GUILDS].sort());
  });

  it('refuses an event of a guild on another shard', async () => {
    const other = onShard(1, 2)[0];
    const res = await events(feed, 0, [{ type: 'leave', guild_id: other, at: at(0) }]).expect(400);
    expect(res.body.details).toEqual([
      { field: 'events[0].guild_id', message: `guild ${other} belongs to shard 1 of 2, not 0` },
    ]);
  });

  it('lets a late part of an older snapshot bring back nothing', async () => {
    const guild = onShard(0, 2)[0];
    const newer = onShard(0, 2).filter((id) => id !== guild);
    await snapshot(feed, 0, {
      shard_count: 2,
      snapshot_at: at(-500),
      total: newer.length,
      guild_ids: newer,
    }).expect(200);
    expect(await held()).not.toContain(guild);
    // A retried part of the snapshot before it, listing the guild: changes nothing.
    const late = await snapshot(feed, 0, {
      shard_count: 2,
      snapshot_at: at(-800),
      total: onShard(0, 2).length,
      guild_ids: [guild],
    }).expect(200);
    expect(late.body.complete).toBe(false);
    expect(await held()).not.toContain(guild);
  });

  it('lets a leave as old as the snapshot win', async () => {
    const guild = onShard(1, 2)[0];
    const readyAt = at(-100);
    await snapshot(feed, 1, {
      shard_count: 2,
      snapshot_at: readyAt,
      total: onShard(1, 2).length,
      guild_ids: onShard(1, 2),
    }).expect(200);
    const res = await events(feed, 1, [{ type: 'leave', guild_id: guild, at: readyAt }]).expect(
      200,
    );
    expect(res.body).toEqual({ applied: 1, ignored: 0 });
    expect(await held()).not.toContain(guild);
  });

  it('refuses a time without its offset', async () => {
    for (const when of ['2026-11-26', new Date().toISOString().slice(0, 16)]) {
      const res = await events(feed, 0, [
        { type: 'join', guild_id: onShard(0, 2)[0], at: when },
      ]).expect(400);
      expect(JSON.stringify(res.body.details)).toContain('with its offset');
    }
  });
});

describe("the feed's own rate-limit budget", () => {
  const platform = useEmulator(SEED);
  let app: TestApp;

  beforeAll(async () => {
    app = await createTestApp({
      env: {
        ...liveModeEnv(platform()),
        ROOT_USERS: DEMO_IDS.alice,
        RATE_LIMITS_ENABLED: 'true',
        // Small budgets, so that the test shows which one a request spends.
        RATE_LIMIT_AUTHENTICATED: '5/60',
        RATE_LIMIT_BOT_FEED: '8/60',
      },
    });
  });
  afterAll(() => app.close());

  it("counts the operators' reports in bot-feed instead of their general budget, and anyone else's as usual", async () => {
    const feed = await signIn(app, platform());
    // Signing in and creating the token spent part of Alice's general budget: what is left shows.
    const general = await app
      .http()
      .get('/sessions/@me')
      .set('Authorization', `Bearer ${feed.login}`)
      .expect(200);
    const generalLeft = Number(general.headers['x-ratelimit-remaining']);
    for (let i = 0; i < 8; i++) {
      const heartbeat = await events(feed, 0, []).expect(200);
      expect(heartbeat.headers['x-ratelimit-bucket']).toBe('bot-feed');
      expect(heartbeat.headers['x-ratelimit-remaining']).toBe(String(7 - i));
    }
    const refused = await events(feed, 0, []).expect(429);
    expect(refused.body).toEqual({
      code: 'RateLimited',
      message: expect.stringContaining('Too many requests (bot-feed)'),
    });
    // The reports took nothing from Alice's general budget.
    const after = await app
      .http()
      .get('/sessions/@me')
      .set('Authorization', `Bearer ${feed.login}`)
      .expect(200);
    expect(after.headers['x-ratelimit-bucket']).toBe('authenticated');
    expect(Number(after.headers['x-ratelimit-remaining'])).toBe(generalLeft - 1);
    // A user who is not an operator is counted in their general budget on the feed routes (and refused).
    const carol = await signInAsRoot(app, platform(), DEMO_IDS.carol);
    const stranger = await app
      .http()
      .post('/internal/shards/0/guild-events')
      .set('Authorization', `Bearer ${carol.bot}`)
      .send({ events: [] })
      .expect(403);
    expect(stranger.headers['x-ratelimit-bucket']).toBe('authenticated');
  });
});

describe('the membership feed against stray, partial and future-dated reports', () => {
  const platform = useEmulator(SEED);
  let feed: Feed;
  const membership = (): BotMembershipService => feed.app.app.get(BotMembershipService);
  /** Ids the bot is not in (under one shard, every id is shard 0's). */
  const invented = Array.from({ length: 6 }, (_, i) =>
    (1_100_000_000_000_900_000n + BigInt(i)).toString(),
  );

  beforeAll(async () => {
    const app = await createTestApp({
      env: { ...liveModeEnv(platform()), ROOT_USERS: DEMO_IDS.alice },
    });
    feed = await signIn(app, platform());
    const snapshotAt = at(-60_000);
    await snapshot(feed, 0, {
      shard_count: 1,
      snapshot_at: snapshotAt,
      total: BOT_GUILDS.length,
      guild_ids: BOT_GUILDS,
    }).expect(200);
    expect((await feedStatus(feed)).body).toMatchObject({ live: true, shard_count: 1 });
  });
  afterAll(() => feed.app.close());

  it('makes no guild present from a snapshot that has not completed, and keeps one snapshot’s rows per shard', async () => {
    const rows = async (): Promise<number> =>
      (
        await databaseOf(feed.app).query<{ n: number }[]>(
          'SELECT count(*)::int AS n FROM bot_guilds WHERE shard_id = 0',
        )
      )[0].n;
    const before = await rows();
    // Parts of snapshots that never complete, each taken later than the last.
    for (let i = 0; i < 3; i++) {
      await snapshot(feed, 0, {
        shard_count: 1,
        snapshot_at: at(-30_000 + i * 1_000),
        total: BOT_GUILDS.length + invented.length,
        guild_ids: invented.slice(i * 2, i * 2 + 2),
      }).expect(200);
      for (const id of invented)
        expect({ id, held: membership().holds(id) }).toEqual({ id, held: false });
    }
    // Only the newest unfinished snapshot's rows are kept beside the guilds the bot is in.
    expect(await rows()).toBe(before + 2);
    expect((await feedStatus(feed)).body).toMatchObject({ live: true, guilds: BOT_GUILDS.length });
    // Its last part makes its guilds present, and leaves nothing it listed.
    const snapshotAt = at(-10_000);
    await snapshot(feed, 0, {
      shard_count: 1,
      snapshot_at: snapshotAt,
      total: BOT_GUILDS.length + 1,
      guild_ids: [...BOT_GUILDS, invented[0]],
    }).expect(200);
    expect(membership().holds(invented[0])).toBe(true);
    for (const id of BOT_GUILDS) expect(membership().holds(id)).toBe(true);
    // Back to the bot's real guilds.
    await snapshot(feed, 0, {
      shard_count: 1,
      snapshot_at: at(-5_000),
      total: BOT_GUILDS.length,
      guild_ids: BOT_GUILDS,
    }).expect(200);
    expect(membership().holds(invented[0])).toBe(false);
  });

  it('applies a leave the bot reports after a join dated ahead of the service’s clock', async () => {
    const guild = EXTRA[0];
    await events(feed, 0, [{ type: 'join', guild_id: guild, at: at(4 * 60_000) }]).expect(200);
    expect(membership().holds(guild)).toBe(true);
    const left = await events(feed, 0, [{ type: 'leave', guild_id: guild, at: at(1_000) }]).expect(
      200,
    );
    expect(left.body).toEqual({ applied: 1, ignored: 0 });
    expect(membership().holds(guild)).toBe(false);
    await events(feed, 0, [{ type: 'join', guild_id: guild, at: at(2_000) }]).expect(200);
    expect(membership().holds(guild)).toBe(true);
  });

  it('stays live when a shard outside its layout sends a complete snapshot, and expires that shard once it is silent', async () => {
    // Shard 5 of 6 does not exist: the bot runs one shard.
    const stray = (BigInt(6) << 22n) * 1_000_000n + (5n << 22n);
    expect(Number((stray >> 22n) % 6n)).toBe(5);
    await snapshot(feed, 5, {
      shard_count: 6,
      snapshot_at: at(-1_000),
      total: 1,
      guild_ids: [stray.toString()],
    }).expect(200);
    const status = await feedStatus(feed);
    expect(status.body).toMatchObject({ live: true, shard_count: 1 });
    expect(membership().isLive()).toBe(true);
    // Its last report is made an hour older than SHARD_EXPIRY_MS allows; shard 0 is reporting.
    await databaseOf(feed.app).query(
      `UPDATE bot_guild_shards SET reported_at = reported_at - $1 * interval '1 millisecond'
       WHERE shard_id = 5`,
      [SHARD_EXPIRY_MS + 60_000],
    );
    expect(await feed.app.app.get(BotGuildsFeedService).expireSilentShards()).toEqual([5]);
    expect(membership().holds(stray.toString())).toBe(false);
    const after = await feedStatus(feed);
    expect(after.body.shards).toContainEqual(
      expect.objectContaining({ shard_id: 5, snapshot_at: null, live: false, guilds: 0 }),
    );
  });
});
