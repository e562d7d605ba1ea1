import { createHash } from 'node:crypto';
// The service's own rules for applying reports: the copy must agree with them report by report.
import {
  CHANNEL_FLAG_OBFUSCATED,
  createGuildStateReporter,
  GuildStateCopy,
  guildStateHash,
  MAX_STATE_BATCH_BYTES,
  ReporterError,
  type FetchLike,
  type GuildState,
  type GuildStateBatch,
  type GuildStateChange,
  type GuildStateChannel,
  type GuildStateReport,
  type GuildStateReporter,
  type GuildStateReporterOptions,
  type GuildStateRole,
  type GuildStateThread,
} from 'clients/bot-reporter/src';

jest.mock('node:crypto', () => {
  const actual = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  return { ...actual, createHash: jest.fn(actual.createHash) };
});

// --- A guild and a scripted run of every kind of change, with the state expected after each ---

const GUILD = '1100000000000000100';
const OWNER = '1100000000000000011';
const BOT = '1100000000000000001';

const id = (n: number): string => `11000000000000001${String(n).padStart(2, '0')}`;
const VIEW = String(1n << 10n);

const ROLES = {
  everyone: { id: GUILD, name: '@everyone', permissions: '104324673', position: 0, managed: false },
  mod: { id: id(3), name: 'Moderator', permissions: '1099511627782', position: 2, managed: false },
  bot: { id: id(2), name: 'Bot', permissions: '268446720', position: 3, managed: true },
} satisfies Record<string, GuildStateRole>;

const CHANNELS = {
  category: {
    id: id(20),
    type: 4,
    name: 'Information',
    position: 0,
    parent_id: null,
    flags: 0,
    permission_overwrites: [{ id: GUILD, type: 0, allow: '0', deny: '2048' }],
  },
  text: {
    id: id(21),
    type: 0,
    name: 'general',
    position: 0,
    parent_id: id(20),
    flags: 0,
    permission_overwrites: [
      { id: id(3), type: 0, allow: '2048', deny: '0' },
      { id: OWNER, type: 1, allow: '0', deny: '64' },
    ],
  },
  /** A channel the bot cannot view, as the gateway sends it. */
  hidden: {
    id: id(22),
    type: 0,
    name: '___hidden___',
    position: 1,
    parent_id: null,
    flags: CHANNEL_FLAG_OBFUSCATED,
    permission_overwrites: [{ id: GUILD, type: 0, allow: '0', deny: VIEW }],
  },
} satisfies Record<string, GuildStateChannel>;

const thread = (n: number, parent: string = CHANNELS.text.id): GuildStateThread => ({
  id: id(40 + n),
  type: 11,
  name: `thread ${n}`,
  parent_id: parent,
  flags: 0,
  archived: false,
});

const INITIAL: GuildState = {
  id: GUILD,
  name: 'Demo Community',
  icon: null,
  owner_id: OWNER,
  roles: [ROLES.everyone, ROLES.mod, ROLES.bot],
  channels: [CHANNELS.category, CHANNELS.text],
  threads: [thread(1)],
  bot_member: { user_id: BOT, roles: [ROLES.bot.id], communication_disabled_until: null },
};

/** The reporter's method for each change, with its arguments after the shard id. */
type Step = [name: string, change: GuildStateChange, expected: GuildState];

const helper: GuildStateRole = {
  id: id(4),
  name: 'Helper',
  permissions: '8192',
  position: 1,
  managed: false,
};

/** Every kind of change, each with the state the service should then hold. */
function scriptedChanges(): Step[] {
  const steps: Step[] = [];
  let state = INITIAL;
  const step = (name: string, change: GuildStateChange, next: GuildState): void => {
    state = next;
    steps.push([name, change, next]);
  };
  step('guild_create', { type: 'guild_create', guild: INITIAL }, INITIAL);
  step(
    'guild_update',
    { type: 'guild_update', guild: { name: 'Renamed', icon: 'a_1f', owner_id: BOT } },
    { ...state, name: 'Renamed', icon: 'a_1f', owner_id: BOT },
  );
  step(
    'role_upsert (new)',
    { type: 'role_upsert', role: helper },
    {
      ...state,
      roles: [...state.roles, helper],
    },
  );
  const mod = { ...ROLES.mod, permissions: '8' };
  step(
    'role_upsert (changed)',
    { type: 'role_upsert', role: mod },
    {
      ...state,
      roles: [ROLES.everyone, mod, ROLES.bot, helper],
    },
  );
  const member = {
    user_id: BOT,
    roles: [helper.id, ROLES.bot.id],
    communication_disabled_until: '2099-01-01T01:00:00+01:00',
  };
  step(
    'bot_member_update',
    { type: 'bot_member_update', member },
    { ...state, bot_member: member },
  );
  step(
    'role_delete (the bot has it)',
    { type: 'role_delete', role_id: helper.id },
    {
      ...state,
      roles: [ROLES.everyone, mod, ROLES.bot],
      bot_member: { ...member, roles: [ROLES.bot.id] },
    },
  );
  step('role_upsert (deleted: ignored)', { type: 'role_upsert', role: helper }, state);
  step(
    'channel_upsert (obfuscated)',
    { type: 'channel_upsert', channel: CHANNELS.hidden },
    {
      ...state,
      channels: [...state.channels, CHANNELS.hidden],
    },
  );
  const text = {
    ...CHANNELS.text,
    name: 'chat',
    permission_overwrites: [{ id: OWNER, type: 1 as const, allow: '0', deny: '64' }],
  };
  step(
    'channel_upsert (changed)',
    { type: 'channel_upsert', channel: text },
    {
      ...state,
      channels: [CHANNELS.category, text, CHANNELS.hidden],
    },
  );
  step(
    'thread_upsert',
    { type: 'thread_upsert', thread: thread(2) },
    {
      ...state,
      threads: [thread(1), thread(2)],
    },
  );
  const other = thread(3, CHANNELS.hidden.id);
  step(
    'thread_upsert (another parent)',
    { type: 'thread_upsert', thread: other },
    {
      ...state,
      threads: [thread(1), thread(2), other],
    },
  );
  step(
    'thread_list_sync (one parent)',
    { type: 'thread_list_sync', channel_ids: [text.id], threads: [thread(4)] },
    { ...state, threads: [other, thread(4)] },
  );
  step(
    'thread_delete',
    { type: 'thread_delete', thread_id: thread(4).id },
    {
      ...state,
      threads: [other],
    },
  );
  step('thread_upsert (deleted: ignored)', { type: 'thread_upsert', thread: thread(4) }, state);
  step(
    'channel_delete (its threads go)',
    { type: 'channel_delete', channel_id: CHANNELS.hidden.id },
    {
      ...state,
      channels: [CHANNELS.category, text],
      threads: [],
    },
  );
  step(
    'thread_list_sync (every parent; an archived thread is not active)',
    { type: 'thread_list_sync', threads: [thread(5), { ...thread(6), archived: true }] },
    { ...state, threads: [thread(5)] },
  );
  step(
    'thread_upsert (archived: it leaves the active threads)',
    { type: 'thread_upsert', thread: { ...thread(5), archived: true } },
    { ...state, threads: [] },
  );
  const guarded = {
    ...text,
    permission_overwrites: [
      ...text.permission_overwrites,
      { id: mod.id, type: 0 as const, allow: '0', deny: '2048' },
    ],
  };
  step(
    'channel_upsert (an overwrite for a role)',
    { type: 'channel_upsert', channel: guarded },
    { ...state, channels: [CHANNELS.category, guarded] },
  );
  step(
    'role_delete (its overwrites go too)',
    { type: 'role_delete', role_id: mod.id },
    {
      ...state,
      roles: state.roles.filter((role) => role.id !== mod.id),
      channels: [CHANNELS.category, text],
    },
  );
  step(
    'thread_upsert (in the channel about to be hidden)',
    { type: 'thread_upsert', thread: thread(7) },
    { ...state, threads: [thread(7)] },
  );
  step(
    'channel_upsert (turned obfuscated: its threads go)',
    { type: 'channel_upsert', channel: { ...text, flags: CHANNEL_FLAG_OBFUSCATED } },
    {
      ...state,
      channels: [CHANNELS.category, { ...text, flags: CHANNEL_FLAG_OBFUSCATED }],
      threads: [],
    },
  );
  step('guild_delete (an outage)', { type: 'guild_delete', unavailable: true }, state);
  return steps;
}

// --- The copy ------------------------------------------------------------------------------------

/** Sorted by id, so that two states compare whatever the order of their lists. */
function sorted(state: GuildState): GuildState {
  const byId = <T extends { id: string }>(items: T[]): T[] =>
    [...items].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return {
    ...state,
    roles: byId(state.roles),
    channels: byId(state.channels),
    threads: byId(state.threads),
  };
}

describe("the reporter's copy of a guild (GuildStateCopy)", () => {
  const steps = scriptedChanges();
  let copy: GuildStateCopy | undefined;

  it.each(steps.map((step, i) => [i, ...step] as const))(
    '%i: after %s, holds the expected state and its hash',
    (i, _name, change, expected) => {
      if (change.type === 'guild_create') copy = new GuildStateCopy(change.guild);
      else if (change.type === 'guild_delete') copy!.unavailable = change.unavailable;
      else copy!.apply(change);
      expect(sorted(copy!.state())).toEqual(sorted(expected));
      expect([i, copy!.hash()]).toEqual([i, guildStateHash(expected)]);
    },
  );

  it('hashes only the part that changed', () => {
    const big: GuildState = {
      ...INITIAL,
      channels: Array.from({ length: 200 }, (_, n) => ({
        ...CHANNELS.text,
        id: String(1_200_000_000_000_000_000n + BigInt(n)),
      })),
    };
    const guild = new GuildStateCopy(big);
    const hashes = createHash as jest.MockedFunction<typeof createHash>;
    hashes.mockClear();
    guild.apply({ type: 'role_upsert', role: { ...ROLES.mod, name: 'Mods' } });
    guild.apply({ type: 'channel_delete', channel_id: big.channels[7].id });
    expect(hashes).toHaveBeenCalledTimes(1);
    expect(guild.hash()).toBe(guildStateHash(guild.state()));
  });

  it('refuses a state that lists an id twice (the service would hash it differently)', () => {
    expect(() => new GuildStateCopy({ ...INITIAL, roles: [ROLES.mod, ROLES.mod] })).toThrow(
      RangeError,
    );
  });

  it('forgets the oldest deleted ids past 1000, as the service does', () => {
    const guild = new GuildStateCopy(INITIAL);
    guild.apply({ type: 'role_delete', role_id: ROLES.mod.id });
    for (let n = 0; n < 1_000; n++) {
      guild.apply({ type: 'thread_delete', thread_id: String(n + 1) });
    }
    guild.apply({ type: 'role_upsert', role: ROLES.mod });
    expect(guild.state().roles.map((role) => role.id)).toContain(ROLES.mod.id);
  });

  /**
   * The running hash, kept part by part, is the hash of the whole state after every change: the
   * service (which folds with this same class) and a bot hashing its cache whole agree. Random
   * runs over a few ids, so that deletes, re-creations and syncs meet.
   */
  it('keeps its running hash equal to the whole state hash on random runs of changes', () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const ids = ['1200000000000000001', '1200000000000000002', '1200000000000000003'];
    const pick = (): string => ids[random(ids.length)];
    // A thread never changes parent.
    const threadIds = ['1300000000000000001', '1300000000000000002', '1300000000000000003'];
    const threadOf = (id: string): GuildStateThread => ({
      ...thread(1, ids[threadIds.indexOf(id) % 2]),
      id,
      archived: random(2) === 0,
    });
    const someThreads = (parent?: string): GuildStateThread[] =>
      threadIds
        .filter((id) => parent === undefined || threadOf(id).parent_id === parent)
        .filter(() => random(2) === 0)
        .map(threadOf);
    const changes: (() => GuildStateChange)[] = [
      () => ({
        type: 'guild_update',
        guild: { name: `n${random(3)}`, icon: null, owner_id: OWNER },
      }),
      () => ({ type: 'role_upsert', role: { ...ROLES.mod, id: pick(), position: random(5) } }),
      () => ({ type: 'role_delete', role_id: pick() }),
      () => ({
        type: 'channel_upsert',
        channel: { ...CHANNELS.text, id: pick(), position: random(5) },
      }),
      () => ({ type: 'channel_delete', channel_id: pick() }),
      () => ({ type: 'thread_upsert', thread: threadOf(threadIds[random(3)]) }),
      () => ({ type: 'thread_delete', thread_id: threadIds[random(3)] }),
      () => {
        const parent = pick();
        return { type: 'thread_list_sync', channel_ids: [parent], threads: someThreads(parent) };
      },
      () => ({ type: 'thread_list_sync', threads: someThreads() }),
      () => ({
        type: 'bot_member_update',
        member: { user_id: BOT, roles: [pick(), ROLES.bot.id], communication_disabled_until: null },
      }),
    ];
    for (let run = 0; run < 50; run++) {
      const guild = new GuildStateCopy(INITIAL);
      for (let seq = 1; seq <= 40; seq++) {
        const change = changes[random(changes.length)]() as Exclude<
          GuildStateChange,
          { type: 'guild_create' | 'guild_delete' }
        >;
        guild.apply(change);
        expect([run, seq, change.type, guild.hash()]).toEqual([
          run,
          seq,
          change.type,
          guildStateHash(guild.state()),
        ]);
        // What the service stores and reads back folds on the same.
        const reread = new GuildStateCopy(guild.state(), guild.deletedIds());
        expect(reread.hash()).toBe(guild.hash());
      }
    }
  });
});

// --- The reporter --------------------------------------------------------------------------------

interface Sent {
  shardId: number;
  body: GuildStateBatch;
  /** The body's size in bytes, as the service counts it against its limit. */
  bytes: number;
  atMs: number;
}

type Answer = (sent: Sent) => Response | undefined;

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });

const refusal = (
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): Response => json(status, { message, code }, headers);

interface ServedStream {
  id: string;
  startedAt: string;
  seq: number;
}

/**
 * The service's ordering rule as docs/guild-state.md states it: a stream per shard, the newest
 * started wins (an older one is refused 409), reports applied in seq order, duplicates ignored, a
 * gap answered with the seq expected. `script` answers first, for the failures a test wants.
 */
interface FakeService {
  fetch: FetchLike;
  sent: Sent[];
  /** What was applied, per shard, in order, with the stream it came on. */
  applied: Map<number, { stream: string; report: GuildStateReport }[]>;
  /** The service loses what it had from `seq` on (a restore, say): its next answer is a gap. */
  rewind(shardId: number, seq: number): void;
  /** The next answer asks for these guilds' full states. */
  askFor(...guildIds: string[]): void;
  /** The reports applied on a shard: `seq type guild_id`. */
  lines(shardId?: number): string[];
}

function fakeService(script: Answer[] = []): FakeService {
  const sent: Sent[] = [];
  const streams = new Map<number, ServedStream>();
  /** What was applied, per shard, in order, with the stream it came on. */
  const applied: FakeService['applied'] = new Map();
  let resync: string[] = [];
  const fetch: FetchLike = (url, init) => {
    const text = init.body as string;
    const request: Sent = {
      shardId: Number(/\/internal\/shards\/(\d+)\/guild-state$/.exec(new URL(url).pathname)![1]),
      body: JSON.parse(text) as GuildStateBatch,
      bytes: Buffer.byteLength(text),
      atMs: Date.now(),
    };
    sent.push(request);
    const scripted = script.shift()?.(request);
    return Promise.resolve(scripted ?? answer(request));
  };
  function answer({ shardId, body }: Sent): Response {
    let current = streams.get(shardId);
    if (current !== undefined && current.id !== body.stream.id) {
      const older =
        body.stream.started_at < current.startedAt ||
        (body.stream.started_at === current.startedAt && body.stream.id < current.id);
      if (older) return refusal(409, 'VersionConflict', `replaced by stream ${current.id}`);
      current = undefined;
    }
    current ??= { id: body.stream.id, startedAt: body.stream.started_at, seq: 0 };
    streams.set(shardId, current);
    const log = applied.get(shardId) ?? [];
    applied.set(shardId, log);
    let count = 0;
    let duplicates = 0;
    let gap: { expected_seq: number; received_seq: number } | null = null;
    for (const report of body.reports) {
      if (report.seq <= current.seq) duplicates += 1;
      else if (report.seq === current.seq + 1) {
        current.seq += 1;
        count += 1;
        log.push({ stream: current.id, report });
      } else {
        gap = { expected_seq: current.seq + 1, received_seq: report.seq };
        break;
      }
    }
    const receipt = { applied: count, duplicates, next_seq: current.seq + 1, gap, resync };
    resync = [];
    return json(200, receipt);
  }
  return {
    fetch,
    sent,
    applied,
    rewind(shardId, seq) {
      streams.get(shardId)!.seq = seq - 1;
    },
    askFor(...guildIds) {
      resync = guildIds;
    },
    lines(shardId = 0) {
      return (applied.get(shardId) ?? []).map(
        ({ report }) => `${report.seq} ${report.type} ${report.guild_id}`,
      );
    },
  };
}

const T0 = new Date('2026-03-01T12:00:00.000Z');
const OTHER = '1100000000000000300';
const otherGuild: GuildState = {
  ...INITIAL,
  id: OTHER,
  name: 'Bot Lab',
  roles: [{ ...ROLES.everyone, id: OTHER }],
  channels: [],
  threads: [],
};
const role = (n: number): GuildStateRole => ({
  ...ROLES.mod,
  id: String(1_300_000_000_000_000_000n + BigInt(n)),
  name: `role ${n}`,
});

describe('the guild-state reporter (clients/bot-reporter)', () => {
  let reporter: GuildStateReporter | undefined;
  let errors: ReporterError[];

  function start(
    service: { fetch: FetchLike },
    options: Partial<GuildStateReporterOptions> = {},
  ): GuildStateReporter {
    reporter = createGuildStateReporter({
      baseUrl: 'http://bms.test/',
      token: 'ara_secret',
      fetch: service.fetch,
      onError: (error) => errors.push(error),
      ...options,
    });
    return reporter;
  }

  beforeEach(() => {
    jest.useFakeTimers({ now: T0 });
    errors = [];
    reporter = undefined;
  });

  afterEach(async () => {
    await reporter?.close().catch(() => undefined);
    jest.useRealTimers();
  });

  it('numbers each shard’s reports in one stream and sends them in order at the tick', async () => {
    const service = fakeService();
    const r = start(service);
    r.guildCreate(0, INITIAL);
    r.roleUpsert(0, GUILD, role(1));
    r.guildCreate(1, otherGuild);
    await jest.advanceTimersByTimeAsync(500);
    r.roleDelete(0, GUILD, role(1).id);
    expect(service.sent).toHaveLength(0);
    expect(r.pending()).toBe(4);

    await jest.advanceTimersByTimeAsync(500);

    expect(service.lines(0)).toEqual([
      `1 guild_create ${GUILD}`,
      `2 role_upsert ${GUILD}`,
      `3 role_delete ${GUILD}`,
    ]);
    expect(service.lines(1)).toEqual([`1 guild_create ${OTHER}`]);
    const [first, second] = service.sent.map((s) => s.body.stream);
    expect(first.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.id).not.toBe(first.id);
    expect(first.started_at).toBe(T0.toISOString());
    expect(service.sent[0].body.reports[2]).toEqual({
      seq: 3,
      type: 'role_delete',
      role_id: role(1).id,
      guild_id: GUILD,
      at: new Date(T0.getTime() + 500).toISOString(),
      hash: guildStateHash(INITIAL),
    });
    expect(r.pending()).toBe(0);

    r.guildUpdate(0, GUILD, { name: 'Later', icon: null, owner_id: OWNER });
    await r.flush();
    expect(service.lines(0).at(-1)).toBe(`4 guild_update ${GUILD}`);
    expect(service.sent.at(-1)!.body.stream).toEqual(first);
    expect(errors).toEqual([]);
  });

  it('sends one request at a time per shard: the next batch waits for the answer', async () => {
    const service = fakeService();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow: FetchLike = async (url, init) => {
      if (service.sent.length === 0) await held;
      return service.fetch(url, init);
    };
    const r = start({ fetch: slow });
    r.guildCreate(0, INITIAL);
    await jest.advanceTimersByTimeAsync(1_000);
    r.roleUpsert(0, GUILD, role(1));
    await jest.advanceTimersByTimeAsync(3_000);
    expect(service.sent).toHaveLength(0);
    release();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(service.sent.map((s) => s.body.reports.map((report) => report.seq))).toEqual([[1], [2]]);
  });

  it.each([
    ['count', { maxBatch: 3 }],
    ['bytes', { maxBatchBytes: 2_000 }],
  ])(
    'splits a shard’s queue into batches by %s, and sends full batches at once',
    async (_by, options: { maxBatch?: number; maxBatchBytes?: number }) => {
      const service = fakeService();
      const r = start(service, options);
      r.guildCreate(0, { ...INITIAL, channels: [], threads: [] });
      for (let n = 1; n <= 11; n++) r.roleUpsert(0, GUILD, role(n));
      // No tick yet: a full batch goes at once.
      await jest.advanceTimersByTimeAsync(0);
      expect(service.lines().map((line) => Number(line.split(' ')[0]))).toEqual(
        Array.from({ length: 12 }, (_, n) => n + 1),
      );
      const maxBatch = options.maxBatch ?? 1_000;
      const maxBytes = options.maxBatchBytes ?? MAX_STATE_BATCH_BYTES;
      expect(service.sent.length).toBeGreaterThan(2);
      service.sent.forEach((s, i) => {
        expect(s.bytes).toBeLessThanOrEqual(maxBytes);
        expect(s.body.reports.length).toBeLessThanOrEqual(maxBatch);
        const next = service.sent[i + 1]?.body.reports[0];
        // Filled: the next report would not have fitted.
        if (next !== undefined) {
          const full =
            s.body.reports.length === maxBatch ||
            s.bytes + 1 + Buffer.byteLength(JSON.stringify(next)) > maxBytes;
          expect(full).toBe(true);
        }
      });
    },
  );

  it('refuses a report larger than a batch may be, and numbers on without it', async () => {
    const service = fakeService();
    const r = start(service);
    r.guildCreate(0, INITIAL);
    r.roleUpsert(0, GUILD, { ...role(1), name: 'x'.repeat(MAX_STATE_BATCH_BYTES) });
    r.roleUpsert(0, GUILD, role(2));
    await r.flush();
    expect(errors.map((e) => [e.kind, e.dropped])).toEqual([['invalid', 1]]);
    expect(errors[0].message).toMatch(
      /^role_upsert of 1100000000000000100 not sent: \d+ bytes, more than a batch may carry \(1048576\)$/,
    );
    expect(service.lines()).toEqual([`1 guild_create ${GUILD}`, `2 role_upsert ${GUILD}`]);
  });

  it('heartbeats every quiet, connected shard with an empty batch of its stream', async () => {
    const service = fakeService();
    const r = start(service);
    r.guildCreate(0, INITIAL);
    r.guildCreate(1, otherGuild);
    await jest.advanceTimersByTimeAsync(1_000);
    r.disconnected(1);
    await jest.advanceTimersByTimeAsync(60_000);
    const beats = service.sent.filter((s) => s.body.reports.length === 0);
    expect(beats.map((s) => [s.shardId, (s.atMs - T0.getTime()) / 1_000])).toEqual([
      [0, 31],
      [0, 61],
    ]);
    expect(beats[0].body.stream).toEqual(service.sent[0].body.stream);
    r.resumed(1);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(service.sent.at(-1)).toMatchObject({ shardId: 1, body: { reports: [] } });
  });

  it.each([
    [
      'a 429, after its Retry-After',
      () => refusal(429, 'RateLimited', 'slow down', { 'Retry-After': '3' }),
      3_000,
    ],
    ['a 503, after a backoff', () => refusal(503, 'InternalError', 'down'), undefined],
    [
      'no answer, after a backoff',
      () => {
        throw new TypeError('fetch failed');
      },
      undefined,
    ],
  ])('sends the same batch again after %s', async (_name, failure, waitMs) => {
    const service = fakeService([failure]);
    const r = start(service);
    r.guildCreate(0, INITIAL);
    r.roleUpsert(0, GUILD, role(1));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(service.sent).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(3_000);
    expect(service.sent).toHaveLength(2);
    expect(service.sent[1].body).toEqual(service.sent[0].body);
    if (waitMs !== undefined) expect(service.sent[1].atMs - service.sent[0].atMs).toBe(waitMs);
    expect(service.lines()).toEqual([`1 guild_create ${GUILD}`, `2 role_upsert ${GUILD}`]);
    expect(errors).toEqual([]);
  });

  it('replays a gap from the seq the service expects, out of its buffer', async () => {
    const service = fakeService();
    const r = start(service);
    r.guildCreate(0, INITIAL);
    for (let n = 1; n <= 4; n++) r.roleUpsert(0, GUILD, role(n));
    await r.flush();
    service.rewind(0, 3); // the service lost seq 3 to 5
    r.roleDelete(0, GUILD, role(1).id);
    await r.flush();

    const seqs = service.sent.map((s) => s.body.reports.map((report) => report.seq));
    expect(seqs).toEqual([[1, 2, 3, 4, 5], [6], [3, 4, 5, 6]]);
    expect(service.lines().slice(-4)).toEqual([
      `3 role_upsert ${GUILD}`,
      `4 role_upsert ${GUILD}`,
      `5 role_upsert ${GUILD}`,
      `6 role_delete ${GUILD}`,
    ]);
    expect(new Set(service.sent.map((s) => s.body.stream.id)).size).toBe(1);
    expect(errors).toEqual([]);
  });

  it('starts a new stream with every guild’s full state when the gap is older than its buffer', async () => {
    const service = fakeService();
    const r = start(service, { replayReports: 2 });
    r.guildCreate(0, INITIAL);
    r.guildCreate(0, otherGuild);
    for (let n = 1; n <= 3; n++) r.roleUpsert(0, GUILD, role(n));
    await r.flush();
    service.rewind(0, 2);
    r.roleDelete(0, GUILD, role(1).id);
    await jest.advanceTimersByTimeAsync(1);
    await r.flush();

    const [old, next] = [service.sent[0].body.stream, service.sent.at(-1)!.body.stream];
    expect(next.id).not.toBe(old.id);
    expect(Date.parse(next.started_at)).toBeGreaterThan(Date.parse(old.started_at));
    const fresh = service.applied.get(0)!.filter((entry) => entry.stream === next.id);
    expect(fresh.map(({ report }) => `${report.seq} ${report.type} ${report.guild_id}`)).toEqual([
      `1 guild_create ${GUILD}`,
      `2 guild_create ${OTHER}`,
    ]);
    const expected: GuildState = {
      ...INITIAL,
      roles: [...INITIAL.roles, role(2), role(3)],
    };
    const create = fresh[0].report as Extract<GuildStateReport, { type: 'guild_create' }>;
    expect(sorted(create.guild)).toEqual(sorted(expected));
    expect(create.hash).toBe(guildStateHash(expected));
    expect(errors).toEqual([]);
  });

  it.each([
    ['its own copy', undefined],
    ['the bot’s cache, when given', { ...INITIAL, name: 'From the cache' }],
  ])('answers a resync with the guild’s full state from %s', async (_from, cached) => {
    const service = fakeService();
    const r = start(service, cached === undefined ? {} : { fullState: () => cached });
    r.guildCreate(0, INITIAL);
    r.roleUpsert(0, GUILD, role(1));
    service.askFor(GUILD);
    await r.flush();
    const expected = cached ?? { ...INITIAL, roles: [...INITIAL.roles, role(1)] };
    const last = service.applied.get(0)!.at(-1)!.report;
    expect(last).toMatchObject({ seq: 3, type: 'guild_create', hash: guildStateHash(expected) });
    expect(sorted((last as Extract<GuildStateReport, { type: 'guild_create' }>).guild)).toEqual(
      sorted(expected),
    );
    expect(r.hash(GUILD)).toBe(guildStateHash(expected));
  });

  it('does not resend a full state the service still differs from, and says so', async () => {
    const service = fakeService();
    const r = start(service);
    r.guildCreate(0, INITIAL);
    await r.flush();
    service.askFor(GUILD);
    r.guildCreate(0, otherGuild); // any batch brings the answer
    await r.flush();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(service.lines()).toEqual([`1 guild_create ${GUILD}`, `2 guild_create ${OTHER}`]);
    expect(errors.map((e) => e.kind)).toEqual(['drift']);
  });

  it('stops a shard whose stream another process replaced (409), and keeps the others', async () => {
    const service = fakeService();
    const r = start(service);
    r.guildCreate(0, INITIAL);
    r.guildCreate(1, otherGuild);
    await r.flush();
    // A newer process takes shard 0 over.
    const newer = createGuildStateReporter({
      baseUrl: 'http://bms.test',
      token: 't',
      fetch: service.fetch,
    });
    await jest.advanceTimersByTimeAsync(10);
    newer.guildCreate(0, INITIAL);
    await newer.close();

    r.roleUpsert(0, GUILD, role(1));
    await expect(r.flush()).rejects.toMatchObject({ kind: 'conflict', status: 409, shardId: 0 });
    expect(r.pending(0)).toBe(0);
    const before = service.sent.length;
    r.roleUpsert(0, GUILD, role(2));
    r.roleUpsert(1, OTHER, role(3));
    await jest.advanceTimersByTimeAsync(90_000);
    expect(service.sent.slice(before).every((s) => s.shardId === 1)).toBe(true);
    expect(service.lines(1).at(-1)).toBe(`2 role_upsert ${OTHER}`);
  });

  it('drops a refused batch, renumbers what follows and sends its guild whole again', async () => {
    const service = fakeService([
      () => undefined,
      () => refusal(400, 'BadRequest', 'Invalid request: reports[0].role.name is too long'),
    ]);
    const r = start(service);
    r.guildCreate(0, INITIAL);
    r.guildCreate(0, otherGuild);
    await r.flush();
    r.roleUpsert(0, GUILD, role(1));
    await expect(r.flush()).rejects.toMatchObject({
      kind: 'refused',
      status: 400,
      code: 'BadRequest',
      dropped: 1,
    });
    r.roleUpsert(0, OTHER, role(2));
    await r.flush();
    expect(service.lines()).toEqual([
      `1 guild_create ${GUILD}`,
      `2 guild_create ${OTHER}`,
      `3 guild_create ${GUILD}`,
      `4 role_upsert ${OTHER}`,
    ]);
    const resent = service.applied.get(0)![2].report;
    expect(resent.hash).toBe(guildStateHash({ ...INITIAL, roles: [...INITIAL.roles, role(1)] }));
  });

  it('attaches to each report the hash of the guild as the bot then holds it', async () => {
    const service = fakeService();
    const r = start(service);
    const steps = scriptedChanges();
    for (const [, change] of steps) send(r, change);
    await r.flush();
    const hashes = service.sent.flatMap((s) => s.body.reports.map((report) => report.hash));
    expect(hashes).toEqual(steps.map(([, , expected]) => guildStateHash(expected)));
    expect(r.hash(GUILD)).toBe(guildStateHash(steps.at(-1)![2]));
  });

  it.each([
    ['sends the bot’s full state instead', true],
    ['refuses it', false],
  ])('for a change to a guild never given whole, %s', async (_name, withCache) => {
    const service = fakeService();
    const cached = { ...INITIAL, roles: [...INITIAL.roles, role(1)] };
    const r = start(service, withCache ? { fullState: () => cached } : {});
    r.roleUpsert(0, GUILD, role(1));
    await r.flush();
    if (withCache) {
      expect(service.applied.get(0)!.map(({ report }) => report)).toEqual([
        expect.objectContaining({ seq: 1, type: 'guild_create', hash: guildStateHash(cached) }),
      ]);
    } else {
      expect(service.sent).toHaveLength(0);
      expect(errors.map((e) => e.kind)).toEqual(['invalid']);
    }
  });

  it('past maxQueuedBytes, drops the queue and starts a new stream of full states', async () => {
    const service = fakeService([() => refusal(503, 'InternalError', 'down')]);
    const r = start(service, { maxQueuedBytes: 5_000, maxRetries: 0 });
    r.guildCreate(0, INITIAL);
    await jest.advanceTimersByTimeAsync(1_000);
    for (let n = 1; n <= 40; n++) r.roleUpsert(0, GUILD, role(n));
    expect(errors.map((e) => e.kind)).toEqual(['unavailable', 'overflow']);
    await r.flush();
    const streams = new Set(service.applied.get(0)!.map((entry) => entry.stream));
    expect(streams.size).toBe(1);
    expect(service.lines()).toEqual([`1 guild_create ${GUILD}`]);
    const create = service.applied.get(0)![0].report as Extract<
      GuildStateReport,
      { type: 'guild_create' }
    >;
    expect(create.guild.roles).toHaveLength(INITIAL.roles.length + 40);
  });

  it('close() sends what is queued, stops the timer and refuses later calls', async () => {
    const service = fakeService();
    const r = start(service);
    r.guildCreate(0, INITIAL);
    await r.close();
    expect(service.lines()).toEqual([`1 guild_create ${GUILD}`]);
    await jest.advanceTimersByTimeAsync(300_000);
    expect(service.sent).toHaveLength(1);
    r.roleUpsert(0, GUILD, role(1));
    expect(errors.map((e) => e.kind)).toEqual(['invalid']);
  });
});

/** Calls the reporter's method for a change, as the bot's wiring does. */
function send(r: GuildStateReporter, change: GuildStateChange): void {
  switch (change.type) {
    case 'guild_create':
      return r.guildCreate(0, change.guild);
    case 'guild_update':
      return r.guildUpdate(0, GUILD, change.guild);
    case 'guild_delete':
      return r.guildDelete(0, GUILD, change.unavailable);
    case 'role_upsert':
      return r.roleUpsert(0, GUILD, change.role);
    case 'role_delete':
      return r.roleDelete(0, GUILD, change.role_id);
    case 'channel_upsert':
      return r.channelUpsert(0, GUILD, change.channel);
    case 'channel_delete':
      return r.channelDelete(0, GUILD, change.channel_id);
    case 'thread_upsert':
      return r.threadUpsert(0, GUILD, change.thread);
    case 'thread_delete':
      return r.threadDelete(0, GUILD, change.thread_id);
    case 'thread_list_sync':
      return r.threadListSync(0, GUILD, change.threads, change.channel_ids);
    case 'bot_member_update':
      return r.botMemberUpdate(0, GUILD, change.member);
  }
}
