import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { UsersService } from 'src/users/users.service';
import { createApiToken, loginAs } from 'test/support/auth';
import { eventually } from 'test/support/eventually';
import { openRawStream, StreamClient, type ReceivedEvent } from 'test/support/event-stream';
import { SHARD_REPORT } from 'test/support/shard-report';
import { proxyRedis } from 'test/support/redis-proxy';
import type { TcpProxy } from 'test/support/tcp-proxy';
import { createTestApp, type TestApp } from 'test/support/test-app';
import { createTestDatabase, type TestDatabase } from 'test/support/test-database';
import { describeShared, useTwoInstances } from 'test/support/two-instances';
import { GUILD, ok, ROLE, SINK_FIELDS } from 'test/support/demo-world';

const ROOT = DEMO_IDS.demoUser;

/** Two instances behind one load balancer: PostgreSQL and Redis shared (CI's second pass). */
describeShared('event streams across two instances', () => {
  const instances = useTwoInstances({
    REDIS_KEY_PREFIX: `events-${Date.now()}:`,
    ROOT_USERS: ROOT,
  });
  const open: StreamClient[] = [];
  afterEach(() => open.splice(0).forEach((client) => client.close()));

  const guildStream = (app: TestApp, token: string, lastEventId?: string): StreamClient => {
    const client = new StreamClient(
      `http://127.0.0.1:${app.port}/guilds/${GUILD}/events`,
      ['ready', 'settings', 'reset'],
      { token, lastEventId },
    );
    open.push(client);
    return client;
  };
  const botStream = (app: TestApp, lastEventId?: string): StreamClient => {
    const client = new StreamClient(
      `http://127.0.0.1:${app.port}/bot-stats/events`,
      ['stats', 'shard', 'totals'],
      { lastEventId },
    );
    open.push(client);
    return client;
  };
  const exec = async (app: TestApp, token: string, body: object): Promise<unknown> =>
    ok(
      await app
        .http()
        .post(`/guilds/${GUILD}/settings`)
        .set('Authorization', `Bearer ${token}`)
        .send(body),
    );

  it('sends a change committed on one instance to the streams of the other, and resumes there', async () => {
    const [a, b] = instances();
    const { token } = await loginAs(a, DEMO_IDS.alice);
    const onB = guildStream(b, token);
    const [ready] = await onB.next(1);
    await exec(a, token, { setting: 'auditlog_sinks', operation: 'Create', fields: SINK_FIELDS });
    await exec(a, token, {
      setting: 'guildroles',
      operation: 'Create',
      fields: { role_id: ROLE.vip, perms: [], index: 9 },
    });
    const events = await onB.next(3);
    expect(
      events.slice(1).map((event) => [event.id, (event.data as { setting: string }).setting]),
    ).toEqual([
      [String(Number(ready.id) + 1), 'auditlog_sinks'],
      [String(Number(ready.id) + 2), 'guildroles'],
    ]);

    // The client reconnects to the other instance after missing a change: nothing is lost.
    onB.close();
    await exec(b, token, {
      setting: 'guildroles',
      operation: 'Update',
      fields: { role_id: ROLE.vip, perms: ['rpc.view'] },
    });
    const onA = guildStream(a, token, events[2].id);
    const [missed] = await onA.next(1);
    expect(missed).toMatchObject({
      type: 'settings',
      id: String(Number(ready.id) + 3),
      data: { setting: 'guildroles', operation: 'Update' },
    });
  });

  it('sends bot health from either instance, numbered once for both', async () => {
    const [a, b] = instances();
    const login = await loginAs(a, ROOT);
    const reporter = (await createApiToken(a, login.token)).token;
    const onA = botStream(a);
    const onB = botStream(b);
    await onA.next(1);
    await onB.next(1);
    await a
      .http()
      .put('/internal/shards/3')
      .set('Authorization', `Bearer ${reporter}`)
      .send({ ...SHARD_REPORT, status: 'Connecting' })
      .expect(200);
    const shardEvent = (client: StreamClient): ReceivedEvent | undefined =>
      client.events.find(
        (event) => event.type === 'shard' && (event.data as { shard_id: number }).shard_id === 3,
      );
    await eventually(
      () => Promise.resolve([shardEvent(onA), shardEvent(onB)]),
      (found) => found.every(Boolean),
    );
    // The same event, with the same id, on both instances.
    expect(shardEvent(onB)).toEqual(shardEvent(onA));
    expect(shardEvent(onA)?.data).toEqual({ shard_id: 3, status: 'Connecting', previous: null });

    // Resuming on the other instance from an id one of them sent.
    const resumed = botStream(a, String(Number(shardEvent(onB)!.id) - 1));
    const [replayed] = await resumed.next(1);
    expect(replayed).toEqual(shardEvent(onB));
  });

  it('ends a stream on one instance when its session is revoked, or its user banned, on the other', async () => {
    const [a, b] = instances();
    const login = await loginAs(a, DEMO_IDS.alice);
    const revoked = await openRawStream(b.port, `/guilds/${GUILD}/events`, {
      Authorization: `Bearer ${login.token}`,
    });
    await eventually(
      () => Promise.resolve(revoked.text()),
      (text) => text.includes('event: ready'),
    );
    await a
      .http()
      .delete(`/sessions/${login.sessionId}`)
      .set('Authorization', `Bearer ${login.token}`)
      .expect(204);
    await revoked.ended;

    const carol = await loginAs(a, DEMO_IDS.carol);
    const bot = await openRawStream(b.port, '/bot-stats/events');
    const alice = await loginAs(a, DEMO_IDS.alice);
    await exec(a, alice.token, {
      setting: 'guildroles',
      operation: 'Create',
      fields: { role_id: ROLE.helper, perms: ['guildroles.view'], index: 8 },
    });
    const banned = await openRawStream(b.port, `/guilds/${GUILD}/events`, {
      Authorization: `Bearer ${carol.token}`,
    });
    expect(banned.response.statusCode).toBe(200);
    await a.app.get(UsersService).setState(DEMO_IDS.carol, 'banned');
    await banned.ended;
    await a.app.get(UsersService).setState(DEMO_IDS.carol, 'normal');
    // Anonymous streams are not anyone's session: they stay open.
    expect(bot.response.complete).toBe(false);
    bot.close();
  });
});

/**
 * One instance loses Redis for a while (its connections cut by a proxy) while the other commits a
 * change: the message never reaches the first, which reads what it missed from the revisions as
 * soon as its subscription is renewed.
 */
describeShared('event streams after a lost Redis connection', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let cut: TestApp;
  let other: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase();
    const shared = { ...database, drop: () => Promise.resolve() };
    const redis = await proxyRedis();
    proxy = redis.proxy;
    const prefix = `events-resync-${Date.now()}:`;
    cut = await createTestApp({
      database: shared,
      env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix },
    });
    other = await createTestApp({ database: shared, env: { REDIS_KEY_PREFIX: prefix } });
  });
  afterAll(async () => {
    await cut.close();
    await other.close();
    await proxy.close();
    await database.drop();
  });

  it('sends the changes committed elsewhere while the subscription was down', async () => {
    const { token } = await loginAs(other, DEMO_IDS.alice);
    const stream = new StreamClient(
      `http://127.0.0.1:${cut.port}/guilds/${GUILD}/events`,
      ['ready', 'settings', 'reset'],
      { token },
    );
    try {
      const [ready] = await stream.next(1);
      proxy.cut();
      const sink = ok(
        await other
          .http()
          .post(`/guilds/${GUILD}/settings`)
          .set('Authorization', `Bearer ${token}`)
          .send({ setting: 'auditlog_sinks', operation: 'Create', fields: SINK_FIELDS }),
      ) as { id: string };
      await sleep(500);
      expect(stream.events).toHaveLength(1);
      proxy.restore();
      const [, missed] = await stream.next(2, 20_000);
      expect(missed).toMatchObject({
        type: 'settings',
        id: String(Number(ready.id) + 1),
        data: { setting: 'auditlog_sinks', key: { id: sink.id }, operation: 'Create' },
      });
    } finally {
      stream.close();
    }
  });
});
