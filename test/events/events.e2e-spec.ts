import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { createApiToken, databaseOf, loginAs, type TestLogin } from 'test/support/auth';
import { eventually } from 'test/support/eventually';
import {
  openRawStream,
  StreamClient,
  type RawStream,
  type ReceivedEvent,
} from 'test/support/event-stream';
import { SHARD_REPORT } from 'test/support/shard-report';
import { createTestApp, useTestApp, type TestApp } from 'test/support/test-app';
import { actor, GUILD, ok, ROLE, SINK_FIELDS, type Actor } from 'test/support/demo-world';

const ROOT = DEMO_IDS.demoUser;
const SETTINGS_EVENTS = ['ready', 'settings', 'reset'];
const BOT_EVENTS = ['stats', 'shard', 'totals'];

function guildStream(t: TestApp, token: string, lastEventId?: string): StreamClient {
  return new StreamClient(`http://127.0.0.1:${t.port}/guilds/${GUILD}/events`, SETTINGS_EVENTS, {
    token,
    lastEventId,
  });
}

function botStream(t: TestApp, lastEventId?: string): StreamClient {
  return new StreamClient(`http://127.0.0.1:${t.port}/bot-stats/events`, BOT_EVENTS, {
    lastEventId,
  });
}

const types = (events: ReceivedEvent[]): string[] => events.map((event) => event.type);

describe('GET /guilds/{guild_id}/events', () => {
  const t = useTestApp();
  let owner: Actor;
  let helper: Actor;
  const open: StreamClient[] = [];
  const track = (client: StreamClient): StreamClient => (open.push(client), client);

  beforeAll(async () => {
    owner = await actor(t(), DEMO_IDS.alice);
    helper = await actor(t(), DEMO_IDS.carol);
    // carol holds the helper role: it may view guildroles, nothing else.
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.helper,
        perms: ['guildroles.view'],
        index: 50,
      }),
    );
    ok(await owner.exec('guildroles', 'Create', { role_id: ROLE.vip, perms: [], index: 60 }));
  });
  afterEach(() => open.splice(0).forEach((client) => client.close()));

  it('opens with the guild position, then each committed change as a settings event', async () => {
    const stream = track(guildStream(t(), owner.token));
    const [ready] = await stream.next(1);
    const revision = (ready.data as { revision: number }).revision;
    expect(ready).toEqual({
      type: 'ready',
      id: String(revision),
      data: { guild_id: GUILD, revision },
    });
    expect(revision).toBeGreaterThan(0);

    const created = ok(await owner.exec('auditlog_sinks', 'Create', SINK_FIELDS)) as { id: string };
    ok(await owner.exec('auditlog_sinks', 'Update', { id: created.id, enabled: false }));
    const events = await stream.next(3);
    expect(events.slice(1)).toEqual([
      {
        type: 'settings',
        id: String(revision + 1),
        data: {
          revision: revision + 1,
          setting: 'auditlog_sinks',
          key: { id: created.id },
          operation: 'Create',
          user_id: DEMO_IDS.alice,
          session_type: 'login',
          changed: expect.arrayContaining(['id', 'channel', 'enabled']) as string[],
          reverts: null,
          created_at: expect.any(String) as string,
        },
      },
      {
        type: 'settings',
        id: String(revision + 2),
        data: expect.objectContaining({
          revision: revision + 2,
          operation: 'Update',
          changed: expect.arrayContaining(['enabled', 'version']) as string[],
        }) as object,
      },
    ]);
  });

  it('sends each caller only the settings it may view, checked at each event', async () => {
    const ownerStream = track(guildStream(t(), owner.token));
    const helperStream = track(guildStream(t(), helper.token));
    await ownerStream.next(1);
    await helperStream.next(1);

    ok(await owner.exec('auditlog_sinks', 'Create', { ...SINK_FIELDS, events: ['member_kick'] }));
    ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.vip, perms: ['rpc.view'] }));
    await ownerStream.next(3);
    await helperStream.next(2);
    expect(helperStream.events[1].data).toMatchObject({ setting: 'guildroles' });

    // carol loses guildroles.view: that change, and the next, are not sent to her.
    ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.helper, perms: ['rpc.view'] }));
    ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.vip, perms: [] }));
    await ownerStream.next(5);
    await sleep(300);
    expect(types(helperStream.events)).toEqual(['ready', 'settings']);
    // Put carol's view back for the tests that follow.
    ok(
      await owner.exec('guildroles', 'Update', {
        role_id: ROLE.helper,
        perms: ['guildroles.view'],
      }),
    );
  });

  it("moves a caller's Last-Event-ID past the revisions it may not see, with an id alone", async () => {
    const helperStream = track(guildStream(t(), helper.token));
    const [ready] = await helperStream.next(1);
    const raw = await openRawStream(t().port, `/guilds/${GUILD}/events`, {
      Authorization: `Bearer ${helper.token}`,
    });
    try {
      await eventually(
        () => Promise.resolve(raw.text()),
        (text) => text.includes('event: ready'),
      );
      ok(await owner.exec('auditlog_sinks', 'Create', { ...SINK_FIELDS, events: ['member_ban'] }));
      const hidden = Number(ready.id) + 1;
      const text = await eventually(
        () => Promise.resolve(raw.text()),
        (value) => value.includes(`\nid: ${hidden}\n\n`),
      );
      expect(text).toContain(`\nid: ${hidden}\n\n`);
      expect(text).not.toContain('event: settings');
      // A reconnect from that id has nothing to replay: no reset, no event.
      const resumed = track(guildStream(t(), helper.token, String(hidden)));
      await sleep(300);
      expect(resumed.events).toEqual([]);
    } finally {
      raw.close();
    }
  });

  it('answers a resumed stream with nothing to replay at once (headers, then heartbeats)', async () => {
    const [ready] = await track(guildStream(t(), owner.token)).next(1);
    const opened = openRawStream(t().port, `/guilds/${GUILD}/events`, {
      Authorization: `Bearer ${owner.token}`,
      'Last-Event-ID': ready.id,
    });
    const raw = await Promise.race([
      opened,
      sleep(2_000).then(() => Promise.reject(new Error('no headers within 2 s'))),
    ]);
    try {
      expect(raw.response.statusCode).toBe(200);
      expect(raw.response.headers['content-type']).toBe('text/event-stream');
    } finally {
      raw.close();
    }
  });

  it('resumes after Last-Event-ID with every revision missed, in order, and nothing twice', async () => {
    const first = track(guildStream(t(), owner.token));
    const [ready] = await first.next(1);
    first.close();
    ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.vip, perms: [] }));
    ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.vip, perms: ['rpc.view'] }));

    const resumed = track(guildStream(t(), owner.token, ready.id));
    const events = await resumed.next(2);
    expect(events.map((event) => Number(event.id))).toEqual([
      Number(ready.id) + 1,
      Number(ready.id) + 2,
    ]);
    ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.vip, perms: [] }));
    expect((await resumed.next(3)).map((event) => Number(event.id))).toEqual([
      Number(ready.id) + 1,
      Number(ready.id) + 2,
      Number(ready.id) + 3,
    ]);
  });

  it('tells a client away for longer than the resume window to read the settings again', async () => {
    const first = track(guildStream(t(), owner.token));
    const [ready] = await first.next(1);
    first.close();
    ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.vip, perms: ['rpc.view'] }));
    // The change was committed 11 minutes ago, as far as the trail says.
    await databaseOf(t()).query(
      `UPDATE settings_revisions SET created_at = now() - interval '11 minutes' WHERE guild_id = $1 AND revision > $2`,
      [GUILD, Number(ready.id)],
    );
    const resumed = track(guildStream(t(), owner.token, ready.id));
    const [reset] = await resumed.next(1);
    expect(reset).toEqual({
      type: 'reset',
      id: String(Number(ready.id) + 1),
      data: { guild_id: GUILD, revision: Number(ready.id) + 1 },
    });
  });

  it('answers an id it never sent with a reset to the current position', async () => {
    const stream = track(guildStream(t(), owner.token, '999999'));
    const [reset] = await stream.next(1);
    expect(reset.type).toBe('reset');
    expect(reset.data).toEqual({ guild_id: GUILD, revision: Number(reset.id) });
  });

  it.each(['', 'x', '-1', '1.5', '01', '9007199254740992', '99999999999999999', '1, 2'])(
    'refuses Last-Event-ID %j with 400 naming it',
    async (value) => {
      const res = await t()
        .http()
        .get(`/guilds/${GUILD}/events`)
        .set('Authorization', `Bearer ${owner.token}`)
        .set('Last-Event-ID', value)
        .expect(400);
      expect(res.body).toEqual({
        message: 'Last-Event-ID must be a whole number from 0 to 9007199254740991',
        code: 'BadRequest',
        details: [
          {
            field: 'Last-Event-ID',
            message: 'Last-Event-ID must be a whole number from 0 to 9007199254740991',
          },
        ],
      });
    },
  );

  it('refuses without a session, outside the guild, and without any View permission', async () => {
    await t().http().get(`/guilds/${GUILD}/events`).expect(401);
    const stranger = await loginAs(t(), DEMO_IDS.demoUser);
    const unknownGuild = await t()
      .http()
      .get('/guilds/1199999999999999999/events')
      .set('Authorization', `Bearer ${stranger.token}`);
    expect({ status: unknownGuild.status, code: unknownGuild.body.code as unknown }).toEqual({
      status: 404,
      code: 'NotFound',
    });
    const bob = await loginAs(t(), DEMO_IDS.bob);
    const res = await t()
      .http()
      .get(`/guilds/${GUILD}/events`)
      .set('Authorization', `Bearer ${bob.token}`)
      .expect(403);
    expect(res.body).toEqual({
      message:
        "You need the View permission of at least one of this guild's settings to follow its changes",
      code: 'Restricted',
    });
  });

  it('sends text/event-stream that proxies neither cache nor buffer', async () => {
    const raw = await openRawStream(t().port, `/guilds/${GUILD}/events`, {
      Authorization: `Bearer ${owner.token}`,
    });
    try {
      expect(raw.response.statusCode).toBe(200);
      expect(raw.response.headers).toMatchObject({
        'content-type': 'text/event-stream',
        'cache-control': expect.stringContaining('no-cache') as string,
        'x-accel-buffering': 'no',
        'x-request-id': expect.any(String) as string,
      });
      const text = await eventually(
        () => Promise.resolve(raw.text()),
        (value) => value.includes('event: ready'),
      );
      expect(text).toMatch(
        /event: ready\nid: \d+\nretry: 3000\ndata: \{"guild_id":"\d+","revision":\d+\}\n\n/,
      );
    } finally {
      raw.close();
    }
  });

  it('ends a stream at once when its session is revoked', async () => {
    const login = await loginAs(t(), DEMO_IDS.alice);
    const raw = await openRawStream(t().port, `/guilds/${GUILD}/events`, {
      Authorization: `Bearer ${login.token}`,
    });
    await eventually(
      () => Promise.resolve(raw.text()),
      (text) => text.includes('event: ready'),
    );
    await t()
      .http()
      .delete(`/sessions/${login.sessionId}`)
      .set('Authorization', `Bearer ${login.token}`)
      .expect(204);
    await raw.ended;
    expect(raw.response.complete).toBe(true);
  });

  it('ends the streams of an API token whose user is banned', async () => {
    const login = await loginAs(t(), DEMO_IDS.carol);
    const token: TestLogin = await createApiToken(t(), login.token);
    const raw = await openRawStream(t().port, `/guilds/${GUILD}/events`, {
      Authorization: `Bearer ${token.token}`,
    });
    await eventually(
      () => Promise.resolve(raw.text()),
      (text) => text.includes('event: ready'),
    );
    const { UsersService } = await import('src/users/users.service');
    await t().app.get(UsersService).setState(DEMO_IDS.carol, 'banned');
    await raw.ended;
    await t().app.get(UsersService).setState(DEMO_IDS.carol, 'normal');
  });
});

describe('event stream limits, heartbeats and shutdown', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        EVENTS_MAX_STREAMS: '4',
        EVENTS_MAX_STREAMS_PER_USER: '2',
        EVENTS_MAX_STREAMS_PER_ADDRESS: '1',
        RATE_LIMITS_ENABLED: 'false',
        EVENTS_HEARTBEAT_SECONDS: '1',
      },
    });
  });
  afterAll(() => t.close());

  /** A bot health stream opens (200) within a few seconds: closed streams gave their place back. */
  async function expectPlaceForAnotherBotStream(): Promise<void> {
    const next = await eventually(
      () => openRawStream(t.port, '/bot-stats/events'),
      (stream) => {
        if (stream.response.statusCode === 200) return true;
        stream.close();
        return false;
      },
    );
    expect(next.response.statusCode).toBe(200);
    next.close();
  }

  it('limits open streams per anonymous address, per user and per instance, with 429', async () => {
    const alice = await loginAs(t, DEMO_IDS.alice);
    const carol = await loginAs(t, DEMO_IDS.carol);
    const guildStreamOf = (token: string): Promise<RawStream> =>
      openRawStream(t.port, `/guilds/${GUILD}/events`, { Authorization: `Bearer ${token}` });
    const refusal = async (path: string, token?: string): Promise<unknown> => {
      const req = t.http().get(path);
      if (token) void req.set('Authorization', `Bearer ${token}`);
      return (await req.expect(429)).body;
    };
    // carol may view guildroles: she may follow the guild.
    const helperRole = await t
      .http()
      .post(`/guilds/${GUILD}/settings`)
      .set('Authorization', `Bearer ${alice.token}`)
      .send({
        setting: 'guildroles',
        operation: 'Create',
        fields: { role_id: ROLE.helper, perms: ['guildroles.view'], index: 50 },
      });
    ok(helperRole);

    const streams = [await openRawStream(t.port, '/bot-stats/events')];
    try {
      expect(await refusal('/bot-stats/events')).toEqual({
        message:
          'Your address has 1 event streams open on this instance, the most allowed; close one first',
        code: 'RateLimited',
      });
      streams.push(await guildStreamOf(alice.token));
      // An API token of the same user counts as the user.
      const script = await createApiToken(t, alice.token);
      streams.push(await guildStreamOf(script.token));
      expect(await refusal(`/guilds/${GUILD}/events`, alice.token)).toEqual({
        message:
          'You have 2 event streams open on this instance, the most allowed; close one first',
        code: 'RateLimited',
      });
      streams.push(await guildStreamOf(carol.token));
      expect(streams.map((stream) => stream.response.statusCode)).toEqual([200, 200, 200, 200]);
      // Four open: the instance's limit, whoever asks.
      expect(await refusal(`/guilds/${GUILD}/events`, carol.token)).toEqual({
        message: 'This instance serves at most 4 event streams; try again later',
        code: 'RateLimited',
      });
    } finally {
      streams.forEach((stream) => stream.close());
    }
    // Closed streams free their places.
    await expectPlaceForAnotherBotStream();
  });

  it('frees the place of a client that leaves while its stream is being opened', async () => {
    // One anonymous stream per address here: each aborted one must give its place back.
    for (let i = 0; i < 20; i++) {
      const request = httpRequest({
        host: '127.0.0.1',
        port: t.port,
        path: i % 2 === 0 ? '/bot-stats/events' : '/bot-stats/events?resume',
        headers: { 'Last-Event-ID': '1' },
      });
      request.on('error', () => undefined);
      request.end();
      await sleep(i % 4);
      request.destroy();
    }
    await expectPlaceForAnotherBotStream();
  });

  it('sends a heartbeat comment on idle streams', async () => {
    const raw = await openRawStream(t.port, '/bot-stats/events');
    try {
      const text = await eventually(
        () => Promise.resolve(raw.text()),
        (value) => value.includes(': heartbeat\n'),
        5_000,
      );
      expect(text).toContain(': heartbeat\n\n');
    } finally {
      raw.close();
    }
  });

  it('ends every stream cleanly when the application shuts down', async () => {
    const alice = await loginAs(t, DEMO_IDS.alice);
    const raw = await openRawStream(t.port, `/guilds/${GUILD}/events`, {
      Authorization: `Bearer ${alice.token}`,
    });
    await eventually(
      () => Promise.resolve(raw.text()),
      (text) => text.includes('event: ready'),
    );
    await t.close();
    await raw.ended;
    expect(raw.response.complete).toBe(true);
  });
});

describe('GET /bot-stats/events', () => {
  const t = useTestApp({ env: { ROOT_USERS: ROOT } });
  let rootToken: string;
  const open: StreamClient[] = [];

  beforeAll(async () => {
    const login = await loginAs(t(), ROOT);
    rootToken = (await createApiToken(t(), login.token, { name: 'shard reporter' })).token;
  });
  afterEach(() => open.splice(0).forEach((client) => client.close()));

  const report = (shardId: number, body: object): Promise<unknown> =>
    t()
      .http()
      .put(`/internal/shards/${shardId}`)
      .set('Authorization', `Bearer ${rootToken}`)
      .send(body)
      .expect(200);

  it('opens with GET /bot-stats, then shard status changes and totals as they happen', async () => {
    const stream = botStream(t());
    open.push(stream);
    const [stats] = await stream.next(1);
    const current = await t().http().get('/bot-stats').expect(200);
    expect(stats).toEqual({
      type: 'stats',
      id: expect.stringMatching(/^\d+$/),
      data: current.body,
    });

    // Comparisons run every 2 s; the first one states the totals, whether or not it runs before
    // the report.
    await report(0, SHARD_REPORT);
    const changes = (): { type: string; data: unknown }[] =>
      stream.events.slice(1).map(({ type, data }) => ({ type, data }));
    await eventually(
      () => Promise.resolve(changes()),
      (events) => events.some((event) => event.type === 'shard'),
    );
    await sleep(100);
    expect(changes()).toEqual(
      expect.arrayContaining([
        { type: 'shard', data: { shard_id: 0, status: 'Ready', previous: null } },
        { type: 'totals', data: { total_guilds: 3, total_users: 12, shards: 1 } },
      ]),
    );
    expect(changes().at(-1)).toEqual({
      type: 'totals',
      data: { total_guilds: 3, total_users: 12, shards: 1 },
    });
    const seen = stream.events.length;
    await report(0, { ...SHARD_REPORT, status: 'Reconnecting' });
    expect((await stream.next(seen + 1))[seen]).toEqual({
      type: 'shard',
      id: String(Number(stream.events[seen - 1].id) + 1),
      data: { shard_id: 0, status: 'Reconnecting', previous: 'Ready' },
    });
    // A report is compared at once, not at the next 2 s tick: a quick flap is seen whole.
    const flapStart = stream.events.length;
    const started = Date.now();
    await report(0, { ...SHARD_REPORT, status: 'Connecting' });
    await sleep(300);
    await report(0, SHARD_REPORT);
    const flap = (await stream.next(flapStart + 2)).slice(flapStart);
    expect(flap.map(({ type, data }) => ({ type, data }))).toEqual([
      { type: 'shard', data: { shard_id: 0, status: 'Connecting', previous: 'Reconnecting' } },
      { type: 'shard', data: { shard_id: 0, status: 'Ready', previous: 'Connecting' } },
    ]);
    expect(Date.now() - started).toBeLessThan(2_000);
    const ids = stream.events.slice(1).map((event) => Number(event.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('resumes after Last-Event-ID with the events missed', async () => {
    const first = botStream(t());
    open.push(first);
    const [stats] = await first.next(1);
    first.close();
    await report(1, SHARD_REPORT);
    // The next comparison runs within 2 s of the report.
    await sleep(2_500);
    const resumed = botStream(t(), stats.id);
    open.push(resumed);
    const events = await resumed.next(2);
    expect(events.map(({ type, data }) => ({ type, data }))).toEqual([
      { type: 'shard', data: { shard_id: 1, status: 'Ready', previous: null } },
      { type: 'totals', data: { total_guilds: 6, total_users: 24, shards: 2 } },
    ]);
    expect(Number(events[0].id)).toBe(Number(stats.id) + 1);
  });

  it('opens with the current state for an id it does not hold', async () => {
    const stream = botStream(t(), '999999');
    open.push(stream);
    const [stats] = await stream.next(1);
    expect(stats.type).toBe('stats');
  });
});
