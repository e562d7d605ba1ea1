import {
  createMembershipReporter,
  MAX_SNAPSHOT_PART,
  ReporterError,
  shardOfGuild,
  type FetchLike,
  type GuildEventBatch,
  type GuildSnapshotPart,
  type MembershipReporter,
  type MembershipReporterOptions,
} from 'clients/bot-reporter/src';

interface Sent {
  method: string;
  path: string;
  body: unknown;
  authorization: string | null;
  /** The fake clock when the request was made. */
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

/**
 * The service as the contract describes it: snapshot parts accumulate per shard and snapshot
 * time, event batches are applied whole. `script` answers first, for the failures a test wants.
 */
function fakeService(script: Answer[] = []): { fetch: FetchLike; sent: Sent[] } {
  const sent: Sent[] = [];
  const received = new Map<string, Set<string>>();
  const fetch: FetchLike = (url, init) => {
    const request: Sent = {
      method: init.method ?? 'GET',
      path: new URL(url).pathname,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
      authorization: new Headers(init.headers).get('authorization'),
      atMs: Date.now(),
    };
    sent.push(request);
    const scripted = script.shift()?.(request);
    if (scripted !== undefined) return Promise.resolve(scripted);
    const snapshot = /^\/internal\/shards\/(\d+)\/guilds$/.exec(request.path);
    if (snapshot !== null) {
      const part = request.body as GuildSnapshotPart;
      const key = `${snapshot[1]} ${part.snapshot_at}`;
      const ids = received.get(key) ?? new Set<string>();
      received.set(key, ids);
      for (const id of part.guild_ids) ids.add(id);
      return Promise.resolve(
        json(200, {
          shard_id: Number(snapshot[1]),
          snapshot_at: part.snapshot_at,
          received: ids.size,
          total: part.total,
          complete: ids.size === part.total,
        }),
      );
    }
    const events = (request.body as GuildEventBatch).events;
    return Promise.resolve(json(200, { applied: events.length, ignored: 0 }));
  };
  return { fetch, sent };
}

/** The `n`th guild id (from 0) on `shardId` of `shardCount` by Discord's rule. */
const guildOn = (shardId: number, shardCount: number, n: number): string =>
  String(((10_000_000n + BigInt(n)) * BigInt(shardCount) + BigInt(shardId)) << 22n);

const T0 = new Date('2026-03-01T12:00:00.000Z');

describe('the membership reporter (clients/bot-reporter)', () => {
  let reporter: MembershipReporter | undefined;
  let errors: ReporterError[];

  function start(
    service: { fetch: FetchLike },
    options: Partial<MembershipReporterOptions> = {},
  ): MembershipReporter {
    reporter = createMembershipReporter({
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
    // Whatever a test left queued must not leak into the next one.
    await reporter?.close().catch(() => undefined);
    jest.useRealTimers();
  });

  describe('snapshot', () => {
    it('dedupes the ids and sends them in parts of at most 4000 with one total and time', async () => {
      const service = fakeService();
      const r = start(service);
      const ids = Array.from({ length: 9_001 }, (_, n) => guildOn(1, 4, n));
      const at = new Date('2026-03-01T11:59:58.123Z');

      const progress = await r.snapshot(1, 4, [...ids, ids[0], ids[9_000]], at);

      expect(service.sent.map((s) => `${s.method} ${s.path}`)).toEqual(
        Array<string>(3).fill('PUT /internal/shards/1/guilds'),
      );
      const parts = service.sent.map((s) => s.body as GuildSnapshotPart);
      expect(parts.map((p) => p.guild_ids.length)).toEqual([MAX_SNAPSHOT_PART, 4_000, 1_001]);
      for (const part of parts) {
        expect(part).toMatchObject({ shard_count: 4, snapshot_at: at.toISOString(), total: 9_001 });
      }
      expect(new Set(parts.flatMap((p) => p.guild_ids))).toEqual(new Set(ids));
      expect(service.sent[0].authorization).toBe('Bearer ara_secret');
      expect(progress).toEqual({
        shard_id: 1,
        snapshot_at: at.toISOString(),
        received: 9_001,
        total: 9_001,
        complete: true,
      });
    });

    it('sends a shard without guilds as one empty part', async () => {
      const service = fakeService();
      await start(service).snapshot(0, 1, []);
      expect(service.sent.map((s) => s.body)).toEqual([
        { shard_count: 1, snapshot_at: T0.toISOString(), total: 0, guild_ids: [] },
      ]);
    });

    it.each([
      ['a guild of another shard', [guildOn(2, 4, 0)], /belongs to shard 2, not 1/],
      ['an id that is not a snowflake', ['general'], /"general" is not a guild id/],
    ])('refuses %s before sending anything', async (_name, ids, message) => {
      const service = fakeService();
      const attempt = start(service).snapshot(1, 4, [guildOn(1, 4, 0), ...ids]);
      await expect(attempt).rejects.toThrow(message);
      await expect(attempt).rejects.toMatchObject({ kind: 'invalid' });
      expect(service.sent).toHaveLength(0);
    });

    it('checks the shard id against the shard count', async () => {
      await expect(start(fakeService()).snapshot(4, 4, [])).rejects.toMatchObject({
        kind: 'invalid',
      });
    });

    it('waits out Retry-After on 429 and retries 5xx and network errors, with bounded retries', async () => {
      const service = fakeService([
        () => refusal(429, 'RateLimited', 'Too many requests', { 'Retry-After': '2' }),
        () => refusal(503, 'InternalError', 'down'),
        () => {
          throw new TypeError('fetch failed');
        },
      ]);
      const r = start(service);
      const done = r.snapshot(0, 2, [guildOn(0, 2, 0)]);

      await jest.advanceTimersByTimeAsync(1_999);
      expect(service.sent).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(service.sent).toHaveLength(2);
      // Then exponential backoff with jitter: at most 1 s, then at most 2 s.
      await jest.advanceTimersByTimeAsync(3_000);
      await expect(done).resolves.toMatchObject({ complete: true });
      expect(service.sent).toHaveLength(4);
      expect(service.sent[1].atMs - service.sent[0].atMs).toBe(2_000);
    });

    it('gives up after maxRetries', async () => {
      const down: Answer = () => refusal(502, 'HTTP 502', 'bad gateway');
      const service = fakeService([down, down, down]);
      const done = start(service, { maxRetries: 2 }).snapshot(0, 1, []);
      const settled = expect(done).rejects.toMatchObject({ kind: 'unavailable', status: 502 });
      await jest.advanceTimersByTimeAsync(5_000);
      await settled;
      expect(service.sent).toHaveLength(3);
    });

    it.each([
      [
        'a refused connection',
        Object.assign(new TypeError('fetch failed'), {
          cause: new Error('connect ECONNREFUSED 127.0.0.1:3000'),
        }),
        'PUT /internal/shards/0/guilds: fetch failed: connect ECONNREFUSED 127.0.0.1:3000',
      ],
      [
        'a timeout',
        new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
        'PUT /internal/shards/0/guilds: no answer within 10000 ms',
      ],
    ])('says why there was no answer: %s', async (_name, thrown, message) => {
      const service = fakeService([
        () => {
          throw thrown;
        },
      ]);
      await expect(start(service, { maxRetries: 0 }).snapshot(0, 1, [])).rejects.toThrow(message);
    });

    it('does not wait out a Retry-After longer than maxRetryWaitMs', async () => {
      const service = fakeService([
        () => refusal(429, 'RateLimited', 'slow down', { 'Retry-After': '600' }),
      ]);
      await expect(start(service).snapshot(0, 1, [])).rejects.toMatchObject({
        kind: 'unavailable',
        status: 429,
      });
      expect(service.sent).toHaveLength(1);
    });

    it('does not retry a 400 and rejects with the service message', async () => {
      const service = fakeService([
        () => refusal(400, 'BadRequest', 'guild_ids must contain unique values'),
      ]);
      const attempt = start(service).snapshot(0, 1, [guildOn(0, 1, 0)]);
      await expect(attempt).rejects.toThrow(
        'PUT /internal/shards/0/guilds: 400 BadRequest: guild_ids must contain unique values',
      );
      await expect(attempt).rejects.toMatchObject({
        kind: 'refused',
        status: 400,
        code: 'BadRequest',
      });
      await jest.advanceTimersByTimeAsync(60_000);
      expect(service.sent.filter((s) => s.method === 'PUT')).toHaveLength(1);
    });

    it('rejects when the last answer says the snapshot is not complete', async () => {
      const service = fakeService([
        (s) =>
          json(200, {
            shard_id: 0,
            snapshot_at: (s.body as GuildSnapshotPart).snapshot_at,
            received: 0,
            total: 1,
            complete: false,
          }),
      ]);
      await expect(start(service).snapshot(0, 1, [guildOn(0, 1, 0)])).rejects.toMatchObject({
        kind: 'incomplete',
      });
    });

    it('stops an older snapshot of the shard at its next part once a newer one starts', async () => {
      const service = fakeService();
      const r = start(service);
      const ids = Array.from({ length: 5_000 }, (_, n) => guildOn(0, 1, n));
      const older = r.snapshot(0, 1, ids, new Date(T0.getTime() - 1_000));
      const newer = r.snapshot(0, 1, ids.slice(0, 10));
      await expect(older).resolves.toBeNull();
      await expect(newer).resolves.toMatchObject({ complete: true, total: 10 });
      expect(service.sent).toHaveLength(2);
    });
  });

  describe('joins and leaves', () => {
    const a = guildOn(0, 2, 1);
    const b = guildOn(1, 2, 2);
    const c = guildOn(0, 2, 3);

    it('batches events per shard, stamped when they were observed, at the flush tick', async () => {
      const service = fakeService();
      const r = start(service);
      r.joined(0, a);
      await jest.advanceTimersByTimeAsync(1_000);
      r.left(1, b);
      await jest.advanceTimersByTimeAsync(1_000);
      r.joined(0, c);
      expect(service.sent).toHaveLength(0);
      expect(r.pending()).toBe(3);

      await jest.advanceTimersByTimeAsync(3_000);

      const batches = new Map(service.sent.map((s) => [s.path, s.body as GuildEventBatch]));
      expect(
        service.sent.every((s) => s.method === 'POST' && s.atMs === T0.getTime() + 5_000),
      ).toBe(true);
      expect(batches.get('/internal/shards/0/guild-events')).toEqual({
        events: [
          { type: 'join', guild_id: a, at: T0.toISOString() },
          { type: 'join', guild_id: c, at: new Date(T0.getTime() + 2_000).toISOString() },
        ],
      });
      expect(batches.get('/internal/shards/1/guild-events')).toEqual({
        events: [{ type: 'leave', guild_id: b, at: new Date(T0.getTime() + 1_000).toISOString() }],
      });
      expect(r.pending()).toBe(0);
    });

    it("keeps only a guild's newest event, by its time", async () => {
      const service = fakeService();
      const r = start(service);
      r.joined(0, a);
      r.left(0, a, new Date(T0.getTime() + 10));
      r.joined(0, a, new Date(T0.getTime() - 10)); // seen earlier, reported late
      await r.flush();
      expect(service.sent.map((s) => s.body)).toEqual([
        {
          events: [{ type: 'leave', guild_id: a, at: new Date(T0.getTime() + 10).toISOString() }],
        },
      ]);
    });

    it("sends a shard's queue as soon as it reaches maxBatch, in batches of maxBatch", async () => {
      const service = fakeService();
      const r = start(service, { maxBatch: 2 });
      r.joined(0, guildOn(0, 1, 1));
      r.joined(0, guildOn(0, 1, 2));
      r.joined(0, guildOn(0, 1, 3));
      await jest.advanceTimersByTimeAsync(0);
      expect(service.sent.map((s) => (s.body as GuildEventBatch).events.length)).toEqual([2, 1]);
    });

    it('keeps the events of a failed flush and sends them at the next tick', async () => {
      const service = fakeService([() => refusal(500, 'InternalError', 'boom')]);
      const r = start(service, { maxRetries: 0 });
      r.joined(0, a);
      await jest.advanceTimersByTimeAsync(5_000);
      expect(errors.map((e) => [e.kind, e.shardId, e.status])).toEqual([['unavailable', 0, 500]]);
      expect(r.pending()).toBe(1);

      r.joined(0, c);
      await jest.advanceTimersByTimeAsync(5_000);
      expect(r.pending()).toBe(0);
      expect((service.sent[1].body as GuildEventBatch).events.map((e) => e.guild_id)).toEqual([
        a,
        c,
      ]);
    });

    it('holds every shard while a 429 Retry-After runs', async () => {
      const service = fakeService([
        () => refusal(429, 'RateLimited', 'Too many requests', { 'Retry-After': '12' }),
      ]);
      const r = start(service, { maxRetries: 0 });
      r.joined(0, a);
      await jest.advanceTimersByTimeAsync(5_000);
      expect(errors.map((e) => e.code)).toEqual(['RateLimited']);
      r.left(1, b);
      await jest.advanceTimersByTimeAsync(10_000); // ticks at 10 s and 15 s: still held
      expect(service.sent).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(5_000); // the tick at 20 s, past 17 s
      expect(service.sent.map((s) => s.path).sort()).toEqual([
        '/internal/shards/0/guild-events',
        '/internal/shards/0/guild-events',
        '/internal/shards/1/guild-events',
      ]);
      expect(r.pending()).toBe(0);
    });

    it('drops a refused batch and says how many events were lost', async () => {
      const service = fakeService([() => refusal(403, 'Restricted', 'Root users only')]);
      const r = start(service);
      r.joined(0, a);
      r.joined(0, c);
      await jest.advanceTimersByTimeAsync(5_000);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(ReporterError);
      expect(errors[0]).toMatchObject({ kind: 'refused', status: 403, dropped: 2, shardId: 0 });
      expect(errors[0].message).toContain('Root users only');
      expect(r.pending()).toBe(0);
      expect(service.sent).toHaveLength(1);
    });

    it('drops the oldest events past maxQueuedPerShard and reports it', async () => {
      const service = fakeService([() => refusal(503, 'InternalError', 'down')]);
      const r = start(service, { maxQueuedPerShard: 2, maxRetries: 0 });
      r.joined(0, guildOn(0, 1, 1));
      r.joined(0, guildOn(0, 1, 2));
      r.joined(0, guildOn(0, 1, 3));
      expect(r.pending(0)).toBe(2);
      await jest.advanceTimersByTimeAsync(5_000);
      expect(errors.map((e) => [e.kind, e.dropped])).toEqual([
        ['overflow', 1],
        ['unavailable', 0],
      ]);
      await r.flush();
      expect((service.sent[1].body as GuildEventBatch).events.map((e) => e.guild_id)).toEqual([
        guildOn(0, 1, 2),
        guildOn(0, 1, 3),
      ]);
    });

    it('drops queued events older than a complete snapshot of their shard', async () => {
      const service = fakeService();
      const r = start(service);
      r.left(0, a, new Date(T0.getTime() - 5_000));
      r.joined(0, c, new Date(T0.getTime() + 1));
      await r.snapshot(0, 2, [a], T0);
      expect(r.pending()).toBe(1);
      await r.flush();
      expect((service.sent[1].body as GuildEventBatch).events.map((e) => e.guild_id)).toEqual([c]);
    });

    it('reports, and does not throw for, arguments the service would refuse', () => {
      const r = start(fakeService());
      r.joined(0, 'not-a-guild');
      r.left(-1, a);
      expect(errors.map((e) => e.kind)).toEqual(['invalid', 'invalid']);
      expect(r.pending()).toBe(0);
    });
  });

  describe('heartbeat', () => {
    it('sends an empty batch for every connected shard that sent nothing for heartbeatIntervalMs', async () => {
      const service = fakeService();
      const r = start(service);
      await r.snapshot(0, 3, []);
      await r.snapshot(1, 3, []);
      await r.snapshot(2, 3, []);
      r.disconnected(2);
      await jest.advanceTimersByTimeAsync(25_000);
      r.joined(1, guildOn(1, 3, 0)); // sent at the 30 s tick: shard 1 is not quiet then
      await jest.advanceTimersByTimeAsync(5_000);

      const heartbeats = service.sent
        .filter((s) => s.method === 'POST')
        .map((s) => [s.path, (s.body as GuildEventBatch).events.length]);
      expect(heartbeats).toEqual([
        ['/internal/shards/0/guild-events', 0],
        ['/internal/shards/1/guild-events', 1],
      ]);

      r.resumed(2);
      await jest.advanceTimersByTimeAsync(5_000);
      expect(service.sent.at(-1)).toMatchObject({
        path: '/internal/shards/2/guild-events',
        body: { events: [] },
      });
    });

    it('keeps each quiet shard reporting about every heartbeatIntervalMs', async () => {
      const service = fakeService();
      const r = start(service);
      await r.snapshot(0, 1, []);
      await jest.advanceTimersByTimeAsync(120_000);
      const times = service.sent.map((s) => (s.atMs - T0.getTime()) / 1_000);
      expect(times).toEqual([0, 30, 60, 90, 120]);
    });
  });

  describe('flush and close', () => {
    it('close() sends what is queued, stops the timer and refuses later events', async () => {
      const service = fakeService();
      const r = start(service);
      r.joined(0, guildOn(0, 1, 1));
      await r.close();
      expect(service.sent).toHaveLength(1);
      expect(r.pending()).toBe(0);
      await jest.advanceTimersByTimeAsync(300_000);
      expect(service.sent).toHaveLength(1);
      r.left(0, guildOn(0, 1, 1));
      expect(errors.map((e) => e.kind)).toEqual(['invalid']);
      await expect(r.snapshot(0, 1, [])).rejects.toMatchObject({ kind: 'invalid' });
    });

    it('flush() rejects with the failure and keeps the events', async () => {
      const service = fakeService([() => refusal(503, 'InternalError', 'down')]);
      const r = start(service, { maxRetries: 0 });
      r.joined(0, guildOn(0, 1, 1));
      await expect(r.flush()).rejects.toMatchObject({ kind: 'unavailable', status: 503 });
      expect(r.pending()).toBe(1);
      expect(errors).toHaveLength(0);
    });

    it('the timer does not keep the process alive', () => {
      jest.useRealTimers();
      const spy = jest.spyOn(global, 'setInterval');
      start(fakeService());
      const timer = spy.mock.results[0].value as NodeJS.Timeout;
      expect(timer.hasRef()).toBe(false);
      spy.mockRestore();
    });
  });

  it('reads the feed status', async () => {
    const status = {
      live: true,
      shard_count: 1,
      stale_after: 120,
      guilds: 2,
      shards: [
        {
          shard_id: 0,
          guilds: 2,
          snapshot_at: T0.toISOString(),
          reported_at: T0.toISOString(),
          live: true,
        },
      ],
    };
    const service = fakeService([() => json(200, status)]);
    await expect(start(service).status()).resolves.toEqual(status);
    expect(service.sent[0]).toMatchObject({ method: 'GET', path: '/internal/bot-guilds' });
  });

  it('follows Discord’s sharding rule', () => {
    // (id >> 22) % count, in BigInt: these ids are past 2^53, where Number would round.
    expect(shardOfGuild('1100000000000000100', 16)).toBe(3);
    expect(shardOfGuild('1100000000000000100', 7)).toBe(6);
    expect(shardOfGuild(guildOn(5, 7, 3), 7)).toBe(5);
  });
});
