import { setTimeout as sleep } from 'node:timers/promises';
import { READINESS_REUSE_MS } from 'src/health/health.service';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { createApiToken } from 'test/support/auth';
import {
  startAppWithCuttableDatabase,
  type AppWithCuttableDatabase,
} from 'test/support/database-server';
import { DEMO_REDIRECT } from 'test/support/platform';
import { rawRequest, type RawRequest } from 'test/support/raw-http';
import type { TestApp } from 'test/support/test-app';
import { actor, SINK_FIELDS, CHANNEL, GUILD, ok, type Actor } from 'test/support/demo-world';

/** A request that needs the database, and how it must be answered while the database is down. */
interface OutageCase {
  name: string;
  request: () => Promise<RawRequest>;
  status: number;
  code: 'InternalError' | 'InternalAuthError';
  /** The status once the database is back. */
  recovered: number;
}

describe('faults: the database stops mid-run', () => {
  let server: AppWithCuttableDatabase;
  let t: TestApp;
  let owner: Actor;
  let unchecked: string;
  let sinkId: string;

  beforeAll(async () => {
    server = await startAppWithCuttableDatabase();
    t = server.app;
    owner = await actor(t, DEMO_IDS.alice);
    // Created but never used, so no instance has it cached: checking it needs the database.
    unchecked = (await createApiToken(t, owner.token, { name: 'never used' })).token;
    const sink = ok(await owner.exec('auditlog_sinks', 'Create', SINK_FIELDS)) as { id: string };
    sinkId = sink.id;
  });
  afterAll(() => server.close());

  const json = (method: string, path: string, body?: unknown, token?: string): RawRequest => ({
    method,
    path,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

  const cases: OutageCase[] = [
    {
      name: 'GET /readyz',
      request: () => Promise.resolve(json('GET', '/readyz')),
      status: 503,
      code: 'InternalError',
      recovered: 200,
    },
    {
      name: 'a token no instance has checked yet',
      request: () => Promise.resolve(json('GET', '/sessions/@me', undefined, unchecked)),
      status: 500,
      code: 'InternalAuthError',
      recovered: 200,
    },
    {
      name: 'GET /sessions',
      request: () => Promise.resolve(json('GET', '/sessions', undefined, owner.token)),
      status: 500,
      code: 'InternalError',
      recovered: 200,
    },
    {
      name: 'POST /sessions',
      request: () =>
        Promise.resolve(
          json('POST', '/sessions', { name: 'outage', type: 'api', expiry: 3600 }, owner.token),
        ),
      status: 500,
      code: 'InternalError',
      recovered: 201,
    },
    {
      name: 'POST /oauth2',
      request: async () => {
        const code = await t.http().get(`/demo/oauth2-code?user_id=${DEMO_IDS.bob}`).expect(200);
        return json('POST', '/oauth2', { code: code.body.code, redirect_uri: DEMO_REDIRECT });
      },
      status: 500,
      code: 'InternalError',
      recovered: 200,
    },
    {
      name: 'POST /guilds/{id}/settings Create',
      request: () =>
        Promise.resolve(
          json(
            'POST',
            `/guilds/${GUILD}/settings`,
            {
              setting: 'auditlog_sinks',
              operation: 'Create',
              fields: { channel: CHANNEL.modLog, events: ['member_ban'], enabled: false },
            },
            owner.token,
          ),
        ),
      status: 500,
      code: 'InternalError',
      recovered: 200,
    },
  ];

  it('answers 500 JSON at once, stays up for what needs no database, and recovers without restart', async () => {
    const sessionsBefore = await listSessions(t, owner.token);
    server.proxy.cut();

    for (const outage of cases) {
      const res = await rawRequest(t.port, await outage.request());
      expect({ name: outage.name, status: res.status, body: res.json }).toEqual({
        name: outage.name,
        status: outage.status,
        body: expect.objectContaining({ code: outage.code, message: expect.any(String) }),
      });
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      if (outage.status === 500) {
        // The id of the logged error, never the driver's words.
        const body = res.json as { error_id: string; message: string };
        expect(body.error_id).toMatch(/^[0-9a-f-]{36}$/);
        expect(res.text).not.toMatch(/ECONNREFUSED|terminated|127\.0\.0\.1|postgres/i);
        expect(t.logs.lines.some((line) => line.error_id === body.error_id)).toBe(true);
        // What is down, and when to try again.
        expect({
          name: outage.name,
          message: body.message,
          retry: res.headers['retry-after'],
        }).toEqual({
          name: outage.name,
          message: expect.stringMatching(
            /database (is unavailable|does not answer).*; try again later$/,
          ),
          retry: '5',
        });
      }
    }
    // What needs no database keeps working: the public configuration, liveness, and a session
    // resolved before the outage (served from the session cache).
    expect((await rawRequest(t.port, json('GET', '/config'))).status).toBe(200);
    expect((await rawRequest(t.port, json('GET', '/healthz'))).status).toBe(200);
    expect(
      (await rawRequest(t.port, json('GET', '/sessions/@me', undefined, owner.token))).status,
    ).toBe(200);

    server.proxy.restore();
    // A readiness round is reused for a second.
    await sleep(READINESS_REUSE_MS);
    // Nothing was half-written: the failed POST /sessions created no session.
    expect(await listSessions(t, owner.token)).toEqual(sessionsBefore);
    for (const outage of cases) {
      const res = await rawRequest(t.port, await outage.request());
      expect({ name: outage.name, status: res.status }).toEqual({
        name: outage.name,
        status: outage.recovered,
      });
    }
    const sinks = ok(await owner.exec('auditlog_sinks', 'View', {})) as { id: string }[];
    expect(sinks.map((sink) => sink.id)).toContain(sinkId);
    expect(sinks).toHaveLength(2);
  });
});

async function listSessions(t: TestApp, token: string): Promise<string[]> {
  const res = await t.http().get('/sessions').set('Authorization', `Bearer ${token}`).expect(200);
  return (res.body.sessions as { id: string }[]).map((session) => session.id).sort();
}
