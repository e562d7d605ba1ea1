import { createHash } from 'node:crypto';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import type { Type } from '@nestjs/common';
import { ModulesContainer, Reflector } from '@nestjs/core';
import { IS_PUBLIC_KEY } from 'src/common/decorators/public.decorator';
import { SessionsService } from 'src/sessions/sessions.service';
import { createApiToken, databaseOf, loginAs, type TestLogin } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';
import { eventually } from 'test/support/eventually';

const ME = '/sessions/@me';

/** A class's methods, inherited ones included (a controller may take handlers from a base). */
function methodNames(prototype: object): Set<string> {
  const names = new Set<string>();
  for (let p = prototype; p !== Object.prototype; p = Object.getPrototypeOf(p) as object) {
    for (const name of Object.getOwnPropertyNames(p)) names.add(name);
  }
  return names;
}

describe('authentication', () => {
  const t = useTestApp();
  let login: TestLogin;
  let api: TestLogin;

  beforeAll(async () => {
    login = await loginAs(t());
    api = await createApiToken(t(), login.token);
  });

  it('never hands a public route the session (it would get null)', () => {
    const reflector = t().app.get(Reflector);
    const takingSession: string[] = [];
    for (const module of t().app.get(ModulesContainer).values()) {
      for (const { metatype } of module.controllers.values()) {
        if (!metatype) continue;
        const controller = metatype as { name: string; prototype: Record<string, unknown> };
        for (const name of methodNames(controller.prototype)) {
          const handler = controller.prototype[name];
          if (name === 'constructor' || typeof handler !== 'function') continue;
          const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {}) as object;
          if (!Object.keys(args).some((key) => key.startsWith(`${RouteParamtypes.SESSION}:`))) {
            continue;
          }
          const route = `${controller.name}.${name}`;
          takingSession.push(route);
          const isPublic = reflector.getAllAndOverride<boolean>(IS_PUBLIC_KEY, [
            handler,
            metatype as Type,
          ]);
          expect({ route, isPublic: isPublic ?? false }).toEqual({ route, isPublic: false });
        }
      }
    }
    // Every controller of the API that acts for its caller: the test cannot pass on none.
    expect(takingSession.length).toBeGreaterThanOrEqual(13);
    expect(takingSession).toContain('SessionsController.current');
  });

  describe('header forms', () => {
    it.each([
      ['Bearer <token> (UserAuth)', (token: string) => `Bearer ${token}`],
      ['bearer <token> (any case)', (token: string) => `bearer ${token}`],
      ['the bare token (PublicAuth)', (token: string) => token],
      ['the bare token with spaces around it', (token: string) => `  ${token} `],
    ])('accepts %s for login sessions and API tokens', async (_label, header) => {
      for (const session of [login, api]) {
        const res = await t()
          .http()
          .get(ME)
          .set('Authorization', header(session.token))
          .expect(200);
        expect(res.body.id).toBe(session.sessionId);
      }
    });
  });

  describe('errors (DESIGN §3)', () => {
    it('answers a missing header with 401 NoAuthToken', async () => {
      const res = await t().http().get(ME).expect(401);
      expect(res.body).toEqual({
        message: 'This route needs a token in the Authorization header',
        code: 'NoAuthToken',
      });
    });

    it('answers an empty header with 401 NoAuthToken', async () => {
      const res = await t().http().get(ME).set('Authorization', '   ').expect(401);
      expect(res.body.code).toBe('NoAuthToken');
    });

    it.each([
      ['Bearer with no token', 'Bearer '],
      ['two words after Bearer', 'Bearer arl_a arl_b'],
      ['a wrong prefix', `arx_${'a'.repeat(43)}`],
      ['a truncated token', 'arl_abc'],
      ['an over-long token', `arl_${'a'.repeat(500)}`],
      ['another scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
      ['an injection attempt', "arl_' OR '1'='1"],
      ['an unknown well-formed token', `arl_${'A'.repeat(43)}`],
    ])('answers %s with 401 InvalidToken', async (_label, header) => {
      const res = await t().http().get(ME).set('Authorization', header).expect(401);
      expect(res.body.code).toBe('InvalidToken');
      expect(Object.keys(res.body).sort()).toEqual(['code', 'message']);
    });

    it('answers an expired session with 401 InvalidToken', async () => {
      const fresh = await createApiToken(t(), login.token);
      await databaseOf(t()).query(
        `UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = $1`,
        [fresh.sessionId],
      );
      const res = await t().http().get(ME).set('Authorization', fresh.token).expect(401);
      expect(res.body.code).toBe('InvalidToken');
    });

    it('refuses a session that expires while cached', async () => {
      const fresh = await createApiToken(t(), login.token, { expiry: 60 });
      await t().http().get(ME).set('Authorization', fresh.token).expect(200);
      const realNow = Date.now;
      Date.now = () => realNow() + 61_000;
      try {
        const res = await t().http().get(ME).set('Authorization', fresh.token).expect(401);
        expect(res.body.code).toBe('InvalidToken');
      } finally {
        Date.now = realNow;
      }
    });

    it('answers a revoked token with 401 InvalidToken on the very next request', async () => {
      const fresh = await createApiToken(t(), login.token);
      await t().http().get(ME).set('Authorization', fresh.token).expect(200);
      await t()
        .http()
        .delete(`/sessions/${fresh.sessionId}`)
        .set('Authorization', login.token)
        .expect(204);
      const res = await t().http().get(ME).set('Authorization', fresh.token).expect(401);
      expect(res.body.code).toBe('InvalidToken');
    });

    it('answers a banned token with 403 ApiBanned, at once', async () => {
      const fresh = await createApiToken(t(), login.token);
      await t().http().get(ME).set('Authorization', fresh.token).expect(200);
      await t().app.get(SessionsService).ban(fresh.sessionId);
      const res = await t().http().get(ME).set('Authorization', fresh.token).expect(403);
      expect(res.body).toEqual({ message: 'This token is banned', code: 'ApiBanned' });
    });
  });

  describe('session types', () => {
    const routes: {
      method: 'get' | 'post' | 'delete';
      path: () => string;
      login: number;
      api: number;
    }[] = [
      { method: 'get', path: () => ME, login: 200, api: 200 },
      { method: 'get', path: () => '/sessions', login: 200, api: 200 },
      { method: 'post', path: () => '/sessions', login: 201, api: 403 },
      {
        method: 'delete',
        path: () => '/sessions/00000000-0000-4000-8000-000000000000',
        login: 404,
        api: 404,
      },
    ];

    it.each(routes)('$method $path answers login $login, api $api', async (route) => {
      const body = { name: 'x', type: 'api', expiry: 600 };
      const loginRes = await t()
        .http()
        [route.method](route.path())
        .set('Authorization', `Bearer ${login.token}`)
        .send(route.method === 'post' ? body : undefined);
      expect(loginRes.status).toBe(route.login);
      const apiRes = await t()
        .http()
        [route.method](route.path())
        .set('Authorization', api.token)
        .send(route.method === 'post' ? body : undefined);
      expect(apiRes.status).toBe(route.api);
      if (route.api === 403) {
        expect(apiRes.body).toEqual({
          message: 'API tokens cannot use this route; it needs a login session',
          code: 'Restricted',
        });
      }
    });
  });

  describe('storage', () => {
    it('keeps only the SHA-256 of each token', async () => {
      const rows: { id: string; token_hash: Buffer }[] = await databaseOf(t()).query(
        `SELECT id, token_hash FROM sessions WHERE id = ANY($1)`,
        [[login.sessionId, api.sessionId]],
      );
      const expected = new Map([
        [login.sessionId, createHash('sha256').update(login.token).digest()],
        [api.sessionId, createHash('sha256').update(api.token).digest()],
      ]);
      expect(rows).toHaveLength(2);
      for (const row of rows)
        expect(row.token_hash.equals(expected.get(row.id) as Buffer)).toBe(true);
    });

    it('holds no token in clear anywhere in the database', async () => {
      const dump: { row: string }[] = await databaseOf(t()).query(
        `SELECT row_to_json(s)::text AS row FROM sessions s
         UNION ALL SELECT row_to_json(u)::text FROM users u`,
      );
      const text = dump.map((d) => d.row).join('\n');
      for (const token of [login.token, api.token]) {
        expect(text).not.toContain(token);
        expect(text).not.toContain(token.slice(4));
      }
    });

    it('writes last_used_at on use, at most once a minute', async () => {
      const fresh = await createApiToken(t(), login.token);
      const lastUsed = async (): Promise<Date | null> =>
        (
          await databaseOf(t()).query<{ last_used_at: Date | null }[]>(
            `SELECT last_used_at FROM sessions WHERE id = $1`,
            [fresh.sessionId],
          )
        )[0].last_used_at;
      expect(await lastUsed()).toBeNull();
      await t().http().get(ME).set('Authorization', fresh.token).expect(200);
      // The write does not hold up the request: wait for it.
      const first = await eventually(lastUsed, (value) => value !== null);
      expect(first).toBeInstanceOf(Date);
      await t().http().get(ME).set('Authorization', fresh.token).expect(200);
      await new Promise((r) => setTimeout(r, 100));
      expect(await lastUsed()).toEqual(first);
    });

    it('purges expired sessions on schedule, not per request', async () => {
      const fresh = await createApiToken(t(), login.token);
      await databaseOf(t()).query(
        `UPDATE sessions SET expires_at = now() - interval '1 hour' WHERE id = $1`,
        [fresh.sessionId],
      );
      await t().http().get(ME).set('Authorization', fresh.token).expect(401);
      const count = async (): Promise<number> =>
        (
          await databaseOf(t()).query<{ n: number }[]>(
            `SELECT count(*)::int AS n FROM sessions WHERE id = $1`,
            [fresh.sessionId],
          )
        )[0].n;
      expect(await count()).toBe(1);
      expect(await t().app.get(SessionsService).purgeExpired()).toBeGreaterThanOrEqual(1);
      expect(await count()).toBe(0);
    });
  });

  it('never writes a token or the Authorization header to the log', () => {
    const text = t().logs.text();
    for (const token of [login.token, api.token]) expect(text).not.toContain(token.slice(4));
    expect(text.toLowerCase()).not.toContain('authorization');
    expect(text).not.toContain('Bearer');
  });
});
