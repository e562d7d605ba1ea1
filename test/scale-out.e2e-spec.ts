import type { Test } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { DEMO_REDIRECT, liveModeEnv, useEmulator } from 'test/support/platform';
import type { TestApp } from 'test/support/test-app';
import { describeShared, useTwoInstances } from 'test/support/two-instances';
import { GUILD, SINK_FIELDS } from 'test/support/demo-world';

/** The settings-write budget both instances share in this test. */
const SETTINGS_WRITES = 12;

/**
 * Two instances on one PostgreSQL, one Redis and one platform, called in turn as a round-robin
 * load balancer would: every step is served by the instance the previous step did not use.
 * Runs in CI's second pass (DATABASE_URL=postgres://…, REDIS_URL set).
 */
describeShared('scale-out: two instances behave as one service', () => {
  const platform = useEmulator();
  const instances = useTwoInstances(() => ({
    ...liveModeEnv(platform()),
    REDIS_KEY_PREFIX: `scale-out-${Date.now()}:`,
    ROOT_USERS: DEMO_IDS.alice,
    RATE_LIMITS_ENABLED: 'true',
    RATE_LIMIT_SETTINGS_WRITE: `${SETTINGS_WRITES}/60`,
  }));
  let turn = 0;
  /** The next instance in round-robin order. */
  const next = (): TestApp => instances()[turn++ % 2];

  async function login(userId: string): Promise<string> {
    const code = platform().issueCode({ userId, redirectUri: DEMO_REDIRECT });
    const res = await next()
      .http()
      .post('/oauth2')
      .send({ code, redirect_uri: DEMO_REDIRECT })
      .expect(200);
    return `Bearer ${res.body.token as string}`;
  }

  function settings(token: string, operation: string, fields: object): Test {
    return next()
      .http()
      .post(`/guilds/${GUILD}/settings`)
      .set('Authorization', token)
      .send({ setting: 'auditlog_sinks', operation, fields });
  }

  it('shares sessions: a login, the tokens it creates, and their listing', async () => {
    const token = await login(DEMO_IDS.demoUser);
    for (let i = 0; i < 4; i++) {
      await next().http().get('/sessions/@me').set('Authorization', token).expect(200);
    }
    const api = await next()
      .http()
      .post('/sessions')
      .set('Authorization', token)
      .send({ name: 'fleet', type: 'api', expiry: 3600 })
      .expect(201);
    const listed = await next().http().get('/sessions').set('Authorization', token).expect(200);
    expect((listed.body.sessions as { id: string }[]).map((s) => s.id)).toContain(
      api.body.session_id,
    );
  });

  it('revokes a token everywhere at once, though both instances had it cached', async () => {
    const token = await login(DEMO_IDS.bob);
    const api = await next()
      .http()
      .post('/sessions')
      .set('Authorization', token)
      .send({ name: 'to revoke', type: 'api', expiry: 3600 })
      .expect(201);
    const apiToken = api.body.token as string;
    for (const instance of instances()) {
      await instance.http().get('/sessions/@me').set('Authorization', apiToken).expect(200);
    }
    await next()
      .http()
      .delete(`/sessions/${api.body.session_id as string}`)
      .set('Authorization', token)
      .expect(204);
    for (const instance of instances()) {
      const res = await instance.http().get('/sessions/@me').set('Authorization', apiToken);
      expect({ status: res.status, code: res.body.code as unknown }).toEqual({
        status: 401,
        code: 'InvalidToken',
      });
    }
  });

  it('keeps caches coherent: settings and bot stats changed on one instance are served by the other', async () => {
    const owner = await login(DEMO_IDS.alice);
    // Both instances cache the (empty) answers first.
    for (let i = 0; i < 2; i++) {
      const empty = await settings(owner, 'View', {}).expect(200);
      expect(empty.body.data).toEqual([]);
      await next().http().get('/bot-stats').expect(200);
    }
    const created = await settings(owner, 'Create', SINK_FIELDS).expect(200);
    const sink = created.body.data as { id: string };
    const viewed = await settings(owner, 'View', {}).expect(200);
    expect(viewed.body.data).toEqual([sink]);
    await settings(owner, 'Update', { id: sink.id, enabled: false }).expect(200);
    const updated = await settings(owner, 'View', {}).expect(200);
    expect(updated.body.data).toMatchObject([{ id: sink.id, enabled: false }]);

    const apiToken = await next()
      .http()
      .post('/sessions')
      .set('Authorization', owner)
      .send({ name: 'shard reporter', type: 'api', expiry: 3600 })
      .expect(201);
    await next()
      .http()
      .put('/internal/shards/3')
      .set('Authorization', apiToken.body.token as string)
      .send({ status: 'Ready', real_latency: 5, guilds: 7, users: 70, uptime: 1, total_uptime: 1 })
      .expect(200);
    for (const instance of instances()) {
      const stats = await instance.http().get('/bot-stats').expect(200);
      expect(stats.body.total_guilds).toBe(7);
    }
  });

  it('counts one rate-limit budget across both instances', async () => {
    const owner = await login(DEMO_IDS.alice);
    // The previous test spent part of the owner's budget (it is per user; every write counts).
    const remaining: number[] = [];
    let refused: { status: number; code: unknown; retryAfter?: string } | undefined;
    for (let i = 0; i < SETTINGS_WRITES; i++) {
      const res = await settings(owner, 'Create', SINK_FIELDS);
      if (res.status === 429) {
        refused = {
          status: res.status,
          code: res.body.code as unknown,
          retryAfter: res.headers['retry-after'],
        };
        break;
      }
      expect(res.status).toBe(200);
      remaining.push(Number(res.headers['x-ratelimit-remaining']));
    }
    // Served alternately by the two instances, yet counted down as one budget, one by one, to 0.
    expect(remaining.length).toBeGreaterThanOrEqual(3);
    expect(remaining).toEqual(remaining.map((_, i) => remaining.length - 1 - i));
    expect(refused).toEqual({ status: 429, code: 'RateLimited', retryAfter: expect.any(String) });
  });
});
