import type { Test } from 'supertest';
import {
  CHANNEL_FLAG_OBFUSCATED,
  guildStateHash,
  type GuildState,
  type GuildStateChannel,
} from 'clients/bot-reporter/src/guild-state';
import { Logger } from '@nestjs/common';
import { Clock } from 'src/common/time/clock';
import { DataSource } from 'typeorm';
import { Metrics } from 'src/common/metrics/metrics';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BotGuildsRepository, FEED_QUEUE_BOUND } from 'src/bot-reports/bot-guilds.repository';
import { shardOf } from 'src/bot-reports/report-time';
import { HELD_BYTES_AT_ONCE } from 'src/bot-reports/guild-state/guild-state-fold';
import { GuildStateWrites } from 'src/bot-reports/guild-state/guild-state.repository';
import { eventually } from 'test/support/eventually';
import { guildCreate, structureCalls, TestStream, type Unnumbered } from 'test/support/guild-state';
import { createTestDatabase } from 'test/support/test-database';
import { describeShared, useTwoInstances } from 'test/support/two-instances';
import { signInAsRoot } from 'test/support/auth';
import { liveModeEnv, useEmulator } from 'test/support/platform';
import { createTestApp, type TestApp } from 'test/support/test-app';

const BOT_GUILDS = [DEMO_IDS.community, DEMO_IDS.botLab];
const GUILD = DEMO_IDS.community;

interface Feed {
  app: TestApp;
  /** Alice's login session: a dashboard user (the owner of the community guild). */
  login: string;
  /** Alice's API token: what the bot's processes report with (Alice is a root user here). */
  bot: string;
}

async function signIn(app: TestApp, emulator: PlatformEmulator): Promise<Feed> {
  return { app, ...(await signInAsRoot(app, emulator)) };
}

const guildInfo = (feed: Feed, guildId = GUILD): Test =>
  feed.app.http().get(`/users/@me/guilds/${guildId}`).set('Authorization', `Bearer ${feed.login}`);

const status = async (feed: Feed): Promise<Record<string, unknown>> =>
  (
    await feed.app
      .http()
      .get('/internal/guild-state')
      .set('Authorization', `Bearer ${feed.bot}`)
      .expect(200)
  ).body as Record<string, unknown>;

const channelNames = (body: { channels: { channel: { name: string } }[] }): string[] =>
  body.channels.map((entry) => entry.channel.name);
const channelIds = (body: { channels: { channel: { id: string } }[] }): string[] =>
  body.channels.map((entry) => entry.channel.id);

describe('the guild-state feed (what the bot sees in its guilds)', () => {
  const platform = useEmulator();
  let feed: Feed;
  let stream: TestStream;
  /** The guild info as the platform path answers it, before any state is fed. */
  let fromPlatform: Record<string, unknown>;

  beforeAll(async () => {
    const app = await createTestApp({
      env: {
        ...liveModeEnv(platform()),
        ROOT_USERS: DEMO_IDS.alice,
        PLATFORM_CACHE_TTL: '1',
        // Metrics on: the drift counter is read below.
        METRICS_PORT: '0',
      },
    });
    feed = await signIn(app, platform());
    await reportMembership(feed);
    stream = new TestStream(() => feed.app, feed.bot);
  });
  afterAll(() => feed.app.close());

  const calls = (): string[] => structureCalls(platform(), DEMO_IDS.bot);

  it('reads a guild from the platform until its state arrives, and lists it as missing', async () => {
    fromPlatform = (await guildInfo(feed).expect(200)).body as Record<string, unknown>;
    expect(calls().length).toBeGreaterThan(0);
    expect(await status(feed)).toEqual({
      membership_live: true,
      max_age: 600,
      guilds: 2,
      live: 0,
      behind: { missing: 2, drifted: 0, unavailable: 0, old_stream: 0, gap: 0, stale: 0 },
      guilds_behind: BOT_GUILDS.map((guild_id) => ({ guild_id, reason: 'missing' })),
      shards: [
        {
          shard_id: 0,
          stream_id: null,
          gap: false,
          replaced_stream_id: null,
          replaced_at: null,
          restart_guilds: 0,
          restart_until: null,
          snapshot_at: expect.any(String) as string,
          replaced_snapshot_at: null,
        },
      ],
    });
  });

  it('answers the same guild info from the fed state with no bot-token call about the guild', async () => {
    const receipt = await stream
      .send(BOT_GUILDS.map((id) => guildCreate(platform(), id)))
      .expect(200);
    expect(receipt.body).toEqual({ applied: 2, duplicates: 0, next_seq: 3, gap: null, resync: [] });
    const before = calls().length;
    const res = await guildInfo(feed).expect(200);
    expect(res.body).toEqual(fromPlatform);
    expect(calls()).toHaveLength(before);
    expect(await status(feed)).toMatchObject({ live: 2, guilds_behind: [] });
  });

  it('applies changes in order and ignores a batch sent again', async () => {
    const first = stream.number([
      {
        type: 'channel_upsert',
        guild_id: GUILD,
        channel: { ...textChannel(platform()), name: 'renamed' },
      },
    ]);
    await stream
      .raw(first)
      .expect(200, { applied: 1, duplicates: 0, next_seq: 4, gap: null, resync: [] });
    await stream
      .raw(first)
      .expect(200, { applied: 0, duplicates: 1, next_seq: 4, gap: null, resync: [] });
    expect(channelNames((await guildInfo(feed).expect(200)).body)).toContain('renamed');
  });

  it('answers a gap with the seq it expects, serves the platform meanwhile, and heals on replay', async () => {
    const [missed, after] = stream.number([
      {
        type: 'guild_update',
        guild_id: GUILD,
        guild: { name: 'missed', icon: null, owner_id: DEMO_IDS.alice },
      },
      {
        type: 'guild_update',
        guild_id: GUILD,
        guild: { name: 'after', icon: null, owner_id: DEMO_IDS.alice },
      },
    ]);
    const gap = await stream.raw([after]).expect(200);
    expect(gap.body).toEqual({
      applied: 0,
      duplicates: 0,
      next_seq: missed.seq,
      gap: { expected_seq: missed.seq, received_seq: after.seq },
      resync: [],
    });
    expect(await status(feed)).toMatchObject({ live: 0, behind: { gap: 2 } });
    // The platform's copy: without the fed rename of the test before.
    expect(channelNames((await guildInfo(feed).expect(200)).body)).not.toContain('renamed');
    await stream.raw([missed, after]).expect(200, {
      applied: 2,
      duplicates: 0,
      next_seq: after.seq + 1,
      gap: null,
      resync: [],
    });
    expect((await guildInfo(feed).expect(200)).body.name).toBe('after');
  });

  it('finds drift by the hash, serves the platform, and heals with the full state', async () => {
    const drift = async (event: string): Promise<number> => {
      const metric = await feed.app.app
        .get(Metrics)
        .registry.getSingleMetric('bms_guild_state_drift_total')!
        .get();
      return metric.values.find((v) => v.labels.event === event)?.value ?? 0;
    };
    const [detected, healed] = [await drift('detected'), await drift('healed')];
    const wrong = '0'.repeat(64);
    const res = await stream
      .send([
        {
          type: 'guild_update',
          guild_id: GUILD,
          guild: { name: 'drift', icon: null, owner_id: DEMO_IDS.alice },
          hash: wrong,
        },
      ])
      .expect(200);
    expect(res.body.resync).toEqual([GUILD]);
    expect(await status(feed)).toMatchObject({
      behind: { drifted: 1 },
      guilds_behind: [{ guild_id: GUILD, reason: 'drifted' }],
    });
    expect((await guildInfo(feed).expect(200)).body.name).toBe('Demo Community');
    expect(await drift('detected')).toBe(detected + 1);
    await stream.send([guildCreate(platform(), GUILD)]).expect(200);
    expect(await status(feed)).toMatchObject({ live: 2 });
    expect([await drift('detected'), await drift('healed')]).toEqual([detected + 1, healed + 1]);
  });

  it('replaces, never merges: a channel missing from a new full state is gone', async () => {
    const state: GuildState = platform().state.gatewayGuildState(GUILD);
    const dropped = textChannel(platform());
    const without = { ...state, channels: state.channels.filter((c) => c.id !== dropped.id) };
    await stream
      .send([
        { type: 'guild_create', guild_id: GUILD, guild: without, hash: guildStateHash(without) },
      ])
      .expect(200);
    const ids = channelIds((await guildInfo(feed).expect(200)).body);
    expect(ids).not.toContain(dropped.id);
    await stream.send([guildCreate(platform(), GUILD)]).expect(200);
  });

  it('never brings back a deleted channel through a late update', async () => {
    const channel = textChannel(platform());
    await stream
      .send([
        { type: 'channel_delete', guild_id: GUILD, channel_id: channel.id },
        { type: 'channel_upsert', guild_id: GUILD, channel },
      ])
      .expect(200);
    const ids = channelIds((await guildInfo(feed).expect(200)).body);
    expect(ids).not.toContain(channel.id);
    await stream.send([guildCreate(platform(), GUILD)]).expect(200);
  });

  it('prunes threads: an archived one, and those of a channel the bot lost sight of', async () => {
    const state: GuildState = platform().state.gatewayGuildState(GUILD);
    const [thread] = state.threads;
    const parent = state.channels.find((c) => c.id === thread.parent_id);
    if (!parent) throw new Error('the demo thread has no parent');
    expect(channelIds((await guildInfo(feed).expect(200)).body)).toContain(thread.id);
    await stream
      .send([{ type: 'thread_upsert', guild_id: GUILD, thread: { ...thread, archived: true } }])
      .expect(200);
    expect(channelIds((await guildInfo(feed).expect(200)).body)).not.toContain(thread.id);
    await stream.send([{ type: 'thread_upsert', guild_id: GUILD, thread }]).expect(200);
    expect(channelIds((await guildInfo(feed).expect(200)).body)).toContain(thread.id);
    // The platform obfuscates the parent (the bot lost VIEW_CHANNEL): its threads go with it.
    const hidden = {
      ...parent,
      name: '___hidden___',
      flags: CHANNEL_FLAG_OBFUSCATED,
      permission_overwrites: [{ id: GUILD, type: 0 as const, allow: '0', deny: '1024' }],
    };
    const res = await stream.send([{ type: 'channel_upsert', guild_id: GUILD, channel: hidden }]);
    expect(res.status).toBe(200);
    const ids = channelIds((await guildInfo(feed).expect(200)).body);
    expect(ids).not.toContain(parent.id);
    expect(ids).not.toContain(thread.id);
    await stream.send([{ type: 'channel_upsert', guild_id: GUILD, channel: parent }]).expect(200);
    // Back in sight, its threads come back only when the bot is told of them again.
    expect(channelIds((await guildInfo(feed).expect(200)).body)).not.toContain(thread.id);
    await stream.send([guildCreate(platform(), GUILD)]).expect(200);
  });

  it('leaves out a channel the bot cannot view, as the platform path does', async () => {
    const state: GuildState = platform().state.gatewayGuildState(GUILD);
    const hidden = {
      id: '1100000000000009999',
      type: 0,
      name: '___hidden___',
      position: 99,
      parent_id: null,
      flags: CHANNEL_FLAG_OBFUSCATED,
      permission_overwrites: [{ id: GUILD, type: 0 as const, allow: '0', deny: '1024' }],
    };
    await stream.send([{ type: 'channel_upsert', guild_id: GUILD, channel: hidden }]).expect(200);
    const names = channelNames((await guildInfo(feed).expect(200)).body);
    expect(names).not.toContain('___hidden___');
    expect(names).toHaveLength(channelNames(fromPlatform as never).length);
    expect(state.channels.length).toBeGreaterThan(0);
    await stream.send([guildCreate(platform(), GUILD)]).expect(200);
  });

  it('asks for the full state of a guild it holds nothing of', async () => {
    const unknown = '1100000000000000999';
    // Any id of the shard is taken; one the service holds no state of needs its full state.
    const res = await stream
      .send([{ type: 'channel_delete', guild_id: unknown, channel_id: '1' }])
      .expect(200);
    expect(res.body).toMatchObject({ applied: 0, resync: [unknown] });
  });

  it('refuses a malformed report with a clear 400 and changes nothing', async () => {
    const next = stream.number([{ type: 'role_delete', guild_id: GUILD, role_id: 'x' } as never]);
    const res = await stream.raw(next).expect(400);
    expect(res.body).toMatchObject({
      code: 'BadRequest',
      details: [{ field: 'reports.0.role_id' }],
    });
    const stray = await stream
      .raw([{ ...next[0], role_id: GUILD, channel_id: '1' } as never])
      .expect(400);
    expect(stray.body.details).toEqual([
      {
        field: 'reports[0].channel_id',
        message:
          'reports[0].channel_id does not belong to a role_delete report (it carries role_id)',
      },
    ]);
    stream.rewind(1);
    expect(await status(feed)).toMatchObject({ live: 2 });
  });

  it('refuses a body over 1 MiB with 413, and takes one over 100 KiB', async () => {
    const state: GuildState = platform().state.gatewayGuildState(GUILD);
    const big = {
      ...state,
      threads: Array.from({ length: 1_500 }, (_, i) => ({
        id: String(1_200_000_000_000_000_000n + BigInt(i)),
        type: 11,
        name: 'x'.repeat(90),
        parent_id: textChannel(platform()).id,
        flags: 0,
        archived: false,
      })),
    };
    const ok = await stream
      .send([{ type: 'guild_create', guild_id: GUILD, guild: big, hash: guildStateHash(big) }])
      .expect(200);
    expect(ok.body.applied).toBe(1);
    const tooBig = await stream
      .send([
        { type: 'guild_create', guild_id: GUILD, guild: big },
        { type: 'guild_create', guild_id: GUILD, guild: big },
        { type: 'guild_create', guild_id: GUILD, guild: big },
        { type: 'guild_create', guild_id: GUILD, guild: big },
        { type: 'guild_create', guild_id: GUILD, guild: big },
      ])
      .expect(413);
    expect(tooBig.body.code).toBe('BadRequest');
    stream.rewind(5);
    await stream.send([guildCreate(platform(), GUILD)]).expect(200);
  });

  it("stops using a shard's guild states once it has been silent for GUILD_STATE_MAX_AGE", async () => {
    const clock = feed.app.app.get(Clock);
    const later = clock.nowMs() + 600_001;
    const moved = jest.spyOn(clock, 'nowMs').mockReturnValue(later);
    try {
      expect(await status(feed)).toMatchObject({ live: 0, behind: { stale: 2 } });
      expect((await guildInfo(feed).expect(200)).body.name).toBe('Demo Community');
    } finally {
      moved.mockRestore();
    }
    expect(await status(feed)).toMatchObject({ live: 2 });
  });

  it("absorbs a restart: the replaced stream's states serve until each is sent again, within GUILD_STATE_MAX_AGE", async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const clock = feed.app.app.get(Clock);
    const restarted = new TestStream(() => feed.app, feed.bot, 0, new Date(Date.now() + 1_000));
    try {
      await restarted.send([]).expect(200);
      // Taken over: said once, naming both streams.
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({ stream_id: restarted.id, replaced_stream_id: stream.id }),
        expect.stringContaining(`took shard 0 over from stream ${stream.id}`),
      );
      const before = calls().length;
      expect(await status(feed)).toMatchObject({
        live: 2,
        shards: [
          {
            stream_id: restarted.id,
            replaced_stream_id: stream.id,
            replaced_at: expect.any(String) as string,
            restart_guilds: 2,
            restart_until: expect.any(String) as string,
          },
        ],
      });
      expect((await guildInfo(feed).expect(200)).body.name).toBe('Demo Community');
      expect(calls()).toHaveLength(before);
      // The process it replaced is refused, and said to run still.
      const refused = await stream
        .send([{ type: 'guild_delete', guild_id: GUILD, unavailable: false }])
        .expect(409);
      expect(refused.body.code).toBe('VersionConflict');
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({ stream_id: restarted.id, refused_stream_id: stream.id }),
        expect.stringContaining('two processes report the shard'),
      );
      await restarted.send([guildCreate(platform(), GUILD)]).expect(200);
      expect(await status(feed)).toMatchObject({ live: 2, shards: [{ restart_guilds: 1 }] });
      // Past GUILD_STATE_MAX_AGE after the replaced stream's last report, what it left is not used.
      const later = clock.nowMs() + 600_001;
      const moved = jest.spyOn(clock, 'nowMs').mockReturnValue(later);
      jest.spyOn(clock, 'now').mockReturnValue(new Date(later));
      await restarted.send([]).expect(200);
      expect(await status(feed)).toMatchObject({
        live: 1,
        behind: { old_stream: 1 },
        guilds_behind: [{ guild_id: DEMO_IDS.botLab, reason: 'old_stream' }],
        shards: [{ restart_guilds: 0, restart_until: null }],
      });
      moved.mockRestore();
      await restarted.send([guildCreate(platform(), DEMO_IDS.botLab)]).expect(200);
      expect(await status(feed)).toMatchObject({ live: 2 });
    } finally {
      jest.restoreAllMocks();
    }
    stream = restarted;
  });

  it('writes no state for a guild_create whose hash equals the stored one, on any stream', async () => {
    const database = feed.app.app.get(DataSource);
    const row = async (): Promise<{ version: string; stream_id: string; first_role: string }> =>
      (
        await database.query<{ version: string; stream_id: string; first_role: string }[]>(
          `SELECT version, stream_id, state->'roles'->0->>'id' AS first_role
           FROM bot_guild_states WHERE guild_id = $1`,
          [GUILD],
        )
      )[0];
    const state: GuildState = platform().state.gatewayGuildState(GUILD);
    expect(state.roles.length).toBeGreaterThan(1);
    // The same guild with its roles in another order: the same hash.
    const reordered = { ...state, roles: [...state.roles].reverse() };
    const again = {
      type: 'guild_create' as const,
      guild_id: GUILD,
      guild: reordered,
      hash: guildStateHash(reordered),
    };
    const before = await row();
    await stream.send([again]).expect(200);
    expect(await row()).toEqual(before);
    // From a new stream (a restart): the row now comes from it; its state was not written.
    const restarted = new TestStream(() => feed.app, feed.bot, 0, new Date(Date.now() + 2_000));
    await restarted.send([again]).expect(200);
    const after = await row();
    expect(after).toMatchObject({ stream_id: restarted.id, first_role: before.first_role });
    expect(Number(after.version)).toBeGreaterThan(Number(before.version));
    expect(await status(feed)).toMatchObject({ live: 2 });
    stream = restarted;
  });

  it("says when a shard's membership snapshot is replaced, naming both snapshots", async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      const before = (await status(feed)).shards as { snapshot_at: string }[];
      await reportMembership(feed);
      const after = (await status(feed)).shards as {
        snapshot_at: string;
        replaced_snapshot_at: string;
      }[];
      expect(after[0].replaced_snapshot_at).toBe(before[0].snapshot_at);
      expect(after[0].snapshot_at > before[0].snapshot_at).toBe(true);
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({
          shard_id: 0,
          snapshot_at: after[0].snapshot_at,
          replaced_snapshot_at: before[0].snapshot_at,
          guild_state_stream_id: stream.id,
        }),
        expect.stringContaining("shard 0's snapshot"),
      );
    } finally {
      warn.mockRestore();
    }
  });

  it('keeps an outage apart from a removal, and a removal is a leave', async () => {
    await stream
      .send([{ type: 'guild_delete', guild_id: DEMO_IDS.botLab, unavailable: true }])
      .expect(200);
    expect(await status(feed)).toMatchObject({ guilds: 2, behind: { unavailable: 1 } });
    await stream.send([{ type: 'guild_delete', guild_id: GUILD, unavailable: false }]).expect(200);
    await guildInfo(feed).expect(404);
    expect(await status(feed)).toMatchObject({ guilds: 1 });
    await stream.send([guildCreate(platform(), GUILD)]).expect(200);
    await guildInfo(feed).expect(200);
  });

  it('takes a stream dated ahead as started now: the process started after it replaces it', async () => {
    const ahead = new TestStream(() => feed.app, feed.bot, 0, new Date(Date.now() + 290_000));
    await ahead.send([]).expect(200);
    // A process started once the service has seen the one dated ahead.
    const seen = Date.now();
    while (Date.now() <= seen);
    const next = new TestStream(() => feed.app, feed.bot);
    await next.send([]).expect(200);
    const refused = await ahead.send([]).expect(409);
    expect(refused.body.code).toBe('VersionConflict');
    stream = next;
  });
});

function textChannel(emulator: PlatformEmulator): GuildStateChannel {
  const state: GuildState = emulator.state.gatewayGuildState(GUILD);
  const channel = state.channels.find(
    (c) => c.type === 0 && (c.flags & CHANNEL_FLAG_OBFUSCATED) === 0,
  );
  if (!channel) throw new Error('the demo guild has no text channel the bot can view');
  return channel;
}

/** Sends the membership snapshot and every guild's state on one stream, as a bot's READY would. */
/** The membership snapshot of the bot's one shard, as its READY would report it. */
async function reportMembership(feed: Feed): Promise<void> {
  await feed.app
    .http()
    .put('/internal/shards/0/guilds')
    .set('Authorization', `Bearer ${feed.bot}`)
    .send({
      shard_count: 1,
      snapshot_at: new Date().toISOString(),
      total: 2,
      guild_ids: BOT_GUILDS,
    })
    .expect(200);
}

async function feedEverything(feed: Feed, emulator: PlatformEmulator): Promise<TestStream> {
  await reportMembership(feed);
  const stream = new TestStream(() => feed.app, feed.bot);
  await stream.send(BOT_GUILDS.map((id) => guildCreate(emulator, id))).expect(200);
  return stream;
}

describe('the guild-state feed across a restart', () => {
  const platform = useEmulator();

  it('is read back from the database: the guild is served at once with no call about it', async () => {
    // On the embedded engine, a data directory both instances open in turn.
    const dataDir = mkdtempSync(join(tmpdir(), 'bms-state-'));
    const shared = await createTestDatabase();
    const env = {
      ...liveModeEnv(platform()),
      ROOT_USERS: DEMO_IDS.alice,
      ...(shared.engine === 'pglite' ? { DATABASE_URL: undefined, DATA_DIR: dataDir } : {}),
    };
    const database = { ...shared, drop: () => Promise.resolve() };
    const first = await createTestApp({ env, database });
    let fed: Record<string, unknown>;
    try {
      const feed = await signIn(first, platform());
      const stream = await feedEverything(feed, platform());
      await stream
        .send([
          {
            type: 'guild_update',
            guild_id: GUILD,
            guild: { name: 'kept', icon: null, owner_id: DEMO_IDS.alice },
          },
        ])
        .expect(200);
      fed = (await guildInfo(feed).expect(200)).body as Record<string, unknown>;
    } finally {
      await first.app.close();
    }
    const second = await createTestApp({ env, database });
    try {
      const feed = await signIn(second, platform());
      const before = structureCalls(platform(), DEMO_IDS.bot).length;
      const res = await guildInfo(feed).expect(200);
      expect(res.body).toEqual({ ...fed, name: 'kept' });
      expect(structureCalls(platform(), DEMO_IDS.bot)).toHaveLength(before);
    } finally {
      await second.close();
      await shared.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describeShared('the guild-state feed on two instances', () => {
  const platform = useEmulator();
  const apps = useTwoInstances(() => ({
    ...liveModeEnv(platform()),
    ROOT_USERS: DEMO_IDS.alice,
    REDIS_KEY_PREFIX: `state-${Date.now()}:`,
  }));

  it("shows a change reported to one instance on the other at once, and a leave ends the other's copy", async () => {
    const [a, b] = apps();
    const onA = await signIn(a, platform());
    const onB = { ...onA, app: b };
    const stream = await feedEverything(onA, platform());
    // B reads the state it learned of through the database, never from the platform.
    const before = structureCalls(platform(), DEMO_IDS.bot).length;
    const seen = await eventually(
      () => status(onB),
      (body) => body.live === 2,
    );
    expect(seen).toMatchObject({ live: 2 });
    expect((await guildInfo(onB).expect(200)).body.name).toBe('Demo Community');
    await stream
      .send([
        {
          type: 'guild_update',
          guild_id: GUILD,
          guild: { name: 'changed on A', icon: null, owner_id: DEMO_IDS.alice },
        },
      ])
      .expect(200);
    const changed = await eventually(
      async () => (await guildInfo(onB).expect(200)).body.name as string,
      (name) => name === 'changed on A',
    );
    expect(changed).toBe('changed on A');
    expect(structureCalls(platform(), DEMO_IDS.bot)).toHaveLength(before);
    await stream.send([{ type: 'guild_delete', guild_id: GUILD, unavailable: false }]).expect(200);
    const left = await eventually(
      async () => (await guildInfo(onB)).status,
      (code) => code === 404,
    );
    expect(left).toBe(404);
  });
});

describe('a batch that names many guilds', () => {
  const platform = useEmulator();

  it('applies every one (the service holds a few states at a time) and changes each later', async () => {
    const app = await createTestApp({
      env: { ...liveModeEnv(platform()), ROOT_USERS: DEMO_IDS.alice },
    });
    try {
      const feed = await signIn(app, platform());
      const stream = new TestStream(() => app, feed.bot);
      const ids = Array.from({ length: 60 }, (_, i) =>
        String(1_200_000_000_000_000_000n + BigInt(i)),
      );
      const small = (id: string): GuildState => ({
        id,
        name: `guild ${id}`,
        icon: null,
        owner_id: DEMO_IDS.alice,
        roles: [{ id, name: '@everyone', permissions: '1024', position: 0, managed: false }],
        channels: [],
        threads: [],
        bot_member: { user_id: DEMO_IDS.bot, roles: [], communication_disabled_until: null },
      });
      const created = await stream
        .send(ids.map((id) => ({ type: 'guild_create', guild_id: id, guild: small(id) })))
        .expect(200);
      expect(created.body).toMatchObject({ applied: 60, resync: [] });
      const renamed = ids.map((id) => ({ ...small(id), name: 'renamed' }));
      const changed = await stream
        .send(
          renamed.map((guild) => ({
            type: 'guild_update',
            guild_id: guild.id,
            guild: { name: guild.name, icon: null, owner_id: DEMO_IDS.alice },
            hash: guildStateHash(guild),
          })),
        )
        .expect(200);
      expect(changed.body).toEqual({
        applied: 60,
        duplicates: 0,
        next_seq: 121,
        gap: null,
        resync: [],
      });
    } finally {
      await app.close();
    }
  });
});

describe("a guild's state, capped as a guild_create is", () => {
  const platform = useEmulator();
  let app: TestApp;
  let bot: string;
  beforeAll(async () => {
    app = await createTestApp({
      env: { ...liveModeEnv(platform()), ROOT_USERS: DEMO_IDS.alice },
    });
    bot = (await signInAsRoot(app, platform())).bot;
  });
  afterAll(() => app.close());

  const snowflake = (n: number): string => String(1_200_000_000_000_000_000n + BigInt(n));
  const guildOf = (id: string, channels: GuildStateChannel[] = []): GuildState => ({
    id,
    name: `guild ${id}`,
    icon: null,
    owner_id: DEMO_IDS.alice,
    roles: [{ id, name: '@everyone', permissions: '1024', position: 0, managed: false }],
    channels,
    threads: [],
    bot_member: { user_id: DEMO_IDS.bot, roles: [], communication_disabled_until: null },
  });
  /** A channel with 500 member overwrites: about 31 KB of JSON. */
  const crowded = (n: number): GuildStateChannel => ({
    id: snowflake(500_000 + n),
    type: 0,
    name: `crowded ${n}`,
    position: n,
    parent_id: null,
    flags: 0,
    permission_overwrites: Array.from({ length: 500 }, (_, i) => ({
      id: snowflake(900_000 + i),
      type: 1 as const,
      allow: '0',
      deny: '1024',
    })),
  });
  const stored = async (
    guildId: string,
  ): Promise<{ roles: number; channels: number; drifted: boolean; bytes: number }> =>
    (
      await app.app
        .get(DataSource)
        .query<{ roles: number; channels: number; drifted: boolean; bytes: number }[]>(
          `SELECT jsonb_array_length(state->'roles') AS roles,
             jsonb_array_length(state->'channels') AS channels, drifted, bytes
           FROM bot_guild_states WHERE guild_id = $1`,
          [guildId],
        )
    )[0];

  it('refuses role_upserts of new ids past 250 roles: not applied, and the full state is asked for', async () => {
    const stream = new TestStream(() => app, bot);
    const id = snowflake(1);
    await stream.send([{ type: 'guild_create', guild_id: id, guild: guildOf(id) }]).expect(200);
    const roles = Array.from({ length: 250 }, (_, i) => ({
      type: 'role_upsert' as const,
      guild_id: id,
      role: {
        id: snowflake(10_000 + i),
        name: `r${i}`,
        permissions: '0',
        position: 1,
        managed: false,
      },
    }));
    const res = await stream.send(roles).expect(200);
    expect(res.body).toMatchObject({ applied: 0, resync: [id] });
    expect(await stored(id)).toMatchObject({ roles: 1, drifted: true });
    // Its full state, within the caps, heals it.
    await stream.send([{ type: 'guild_create', guild_id: id, guild: guildOf(id) }]).expect(200);
    expect(await stored(id)).toMatchObject({ roles: 1, drifted: false });
  });

  it('refuses channel_upserts that take its JSON past what one batch can carry', async () => {
    const stream = new TestStream(() => app, bot);
    const id = snowflake(2);
    await stream.send([{ type: 'guild_create', guild_id: id, guild: guildOf(id) }]).expect(200);
    const upsert = (from: number, count: number): Unnumbered[] =>
      Array.from({ length: count }, (_, i) => ({
        type: 'channel_upsert' as const,
        guild_id: id,
        channel: crowded(from + i),
      }));
    await stream.send(upsert(0, 25)).expect(200, {
      applied: 25,
      duplicates: 0,
      next_seq: 27,
      gap: null,
      resync: [],
    });
    const res = await stream.send(upsert(25, 15)).expect(200);
    expect(res.body).toMatchObject({ applied: 0, resync: [id] });
    const row = await stored(id);
    expect(row).toMatchObject({ channels: 25, drifted: true });
    expect(row.bytes).toBeLessThanOrEqual(1_048_576);
  });

  it('reads held states a few MiB at a time, however many large guilds a batch changes', async () => {
    const stream = new TestStream(() => app, bot);
    const ids = Array.from({ length: 6 }, (_, i) => snowflake(100 + i));
    // About 0.9 MiB of JSON each, one batch each.
    for (const id of ids) {
      const channels = Array.from({ length: 29 }, (_, n) => crowded(n));
      await stream.send([{ type: 'guild_create', guild_id: id, guild: guildOf(id, channels) }]);
    }
    const sizes = new Map<string, number>();
    for (const id of ids) sizes.set(id, (await stored(id)).bytes);
    expect(Math.min(...sizes.values())).toBeGreaterThan(850_000);
    const held = jest.spyOn(GuildStateWrites.prototype, 'held');
    try {
      const renamed = ids.map((id) => ({
        type: 'guild_update' as const,
        guild_id: id,
        guild: { name: 'renamed', icon: null, owner_id: DEMO_IDS.alice },
      }));
      await stream.send(renamed).expect(200, {
        applied: 6,
        duplicates: 0,
        next_seq: 13,
        gap: null,
        resync: [],
      });
      const reads = held.mock.calls.map(([guildIds]) => guildIds);
      expect(reads.flat().sort()).toEqual([...ids].sort());
      for (const guildIds of reads) {
        const bytes = guildIds.reduce((sum, id) => sum + (sizes.get(id) ?? 0), 0);
        expect(bytes).toBeLessThanOrEqual(HELD_BYTES_AT_ONCE);
      }
    } finally {
      held.mockRestore();
    }
  });
});

describe("a burst of the feeds' writes (a large bot's shards reconnecting)", () => {
  const platform = useEmulator();
  let app: TestApp;
  let bot: string;
  beforeAll(async () => {
    app = await createTestApp({
      env: { ...liveModeEnv(platform()), ROOT_USERS: DEMO_IDS.alice },
    });
    bot = (await signInAsRoot(app, platform())).bot;
  });
  afterAll(() => app.close());

  it('waits its turn without a database connection: one transaction at a time per instance', async () => {
    const dataSource = app.app.get(DataSource);
    const transaction = dataSource.transaction.bind(dataSource);
    let open = 0;
    let most = 0;
    // A transaction asked for holds, or waits for, a connection of the pool until it ends.
    const counted = jest.spyOn(dataSource, 'transaction').mockImplementation(((
      work: (manager: unknown) => Promise<unknown>,
    ) => {
      most = Math.max(most, ++open);
      return transaction(work as never).finally(() => (open -= 1));
    }) as never);
    const snapshotAt = new Date().toISOString();
    const parts = Array.from({ length: 12 }, (_, shard) =>
      app
        .http()
        .put(`/internal/shards/${shard}/guilds`)
        .set('Authorization', `Bearer ${bot}`)
        .send({ shard_count: 12, snapshot_at: snapshotAt, total: 0, guild_ids: [] }),
    );
    const answers = await Promise.all(parts);
    counted.mockRestore();
    expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200));
    expect(most).toBe(1);
  });

  it("refuses the bot's reports past the instance's queue at once, 429 with Retry-After", async () => {
    const dataSource = app.app.get(DataSource);
    const repository = app.app.get<BotGuildsRepository, { queued: number }>(BotGuildsRepository);
    const transaction = dataSource.transaction.bind(dataSource);
    // The first write holds its turn until released: the others queue behind it.
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let first = true;
    const spy = jest.spyOn(dataSource, 'transaction').mockImplementation(((
      work: (manager: unknown) => Promise<unknown>,
    ) => {
      if (!first) return transaction(work as never);
      first = false;
      return held.then(() => transaction(work as never));
    }) as never);
    const snapshotAt = new Date().toISOString();
    const part = (
      shard: number,
    ): Promise<{ status: number; headers: Record<string, string>; body: { code?: string } }> =>
      app
        .http()
        .put(`/internal/shards/${shard}/guilds`)
        .set('Authorization', `Bearer ${bot}`)
        .send({ shard_count: 100, snapshot_at: snapshotAt, total: 0, guild_ids: [] })
        .then((res) => res);
    const queued = Array.from({ length: FEED_QUEUE_BOUND }, (_, shard) => part(shard));
    await eventually(
      () => Promise.resolve(repository.queued),
      (count) => count === FEED_QUEUE_BOUND,
    );
    const refused = await part(FEED_QUEUE_BOUND);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('RateLimited');
    expect(refused.headers['retry-after']).toBe('1');
    release();
    const answers = await Promise.all(queued);
    spy.mockRestore();
    expect(answers.map((answer) => answer.status)).toEqual(Array(FEED_QUEUE_BOUND).fill(200));
    expect((await part(FEED_QUEUE_BOUND)).status).toBe(200);
  });
});

describe('a guild a snapshot leaves', () => {
  const platform = useEmulator();

  it("finds each guild's shard by the platform's rule, to the last bit of the largest ids", async () => {
    const app = await createTestApp({
      env: { ...liveModeEnv(platform()), ROOT_USERS: DEMO_IDS.alice },
    });
    try {
      const { bot } = await signInAsRoot(app, platform());
      // (id >> 22) % 3 with the low bits all set: a rounded quotient lands on the next shard.
      const ids = [
        '1100000000004194303',
        '9223372036854775807',
        '9223372036854775808',
        '18446744073709551615',
      ];
      const snapshot = (shard: number, listed: string[], at: number): Promise<unknown> =>
        app
          .http()
          .put(`/internal/shards/${shard}/guilds`)
          .set('Authorization', `Bearer ${bot}`)
          .send({
            shard_count: 3,
            snapshot_at: new Date(at).toISOString(),
            total: listed.length,
            guild_ids: listed,
          })
          .expect(200);
      const onShard = (shard: number): string[] => ids.filter((id) => shardOf(id, 3) === shard);
      const start = Date.now() - 60_000;
      for (const shard of [0, 1, 2]) await snapshot(shard, onShard(shard), start);
      const held = async (): Promise<number> =>
        (
          (
            await app
              .http()
              .get('/internal/bot-guilds')
              .set('Authorization', `Bearer ${bot}`)
              .expect(200)
          ).body as { guilds: number }
        ).guilds;
      expect(await held()).toBe(ids.length);
      // Each shard's empty snapshot leaves its own guilds, and only those.
      let left = 0;
      for (const shard of [0, 1, 2]) {
        await snapshot(shard, [], start + 1_000);
        left += onShard(shard).length;
        expect(await held()).toBe(ids.length - left);
      }
    } finally {
      await app.close();
    }
  });

  it('loses its state with its membership, the others keep theirs', async () => {
    const app = await createTestApp({
      env: { ...liveModeEnv(platform()), ROOT_USERS: DEMO_IDS.alice },
    });
    try {
      const feed = await signIn(app, platform());
      const stream = await feedEverything(feed, platform());
      const rows = async (): Promise<string[]> =>
        (
          await app.app
            .get(DataSource)
            .query<{ guild_id: string }[]>(`SELECT guild_id FROM bot_guild_states ORDER BY 1`)
        ).map((row) => row.guild_id);
      expect(await rows()).toEqual([...BOT_GUILDS].sort());
      await app
        .http()
        .put('/internal/shards/0/guilds')
        .set('Authorization', `Bearer ${feed.bot}`)
        .send({
          shard_count: 1,
          snapshot_at: new Date(Date.now() + 1_000).toISOString(),
          total: 1,
          guild_ids: [GUILD],
        })
        .expect(200);
      expect(await rows()).toEqual([GUILD]);
      expect(await status(feed)).toMatchObject({ guilds: 1, live: 1 });
      await stream.send([]).expect(200);
    } finally {
      await app.close();
    }
  });
});
