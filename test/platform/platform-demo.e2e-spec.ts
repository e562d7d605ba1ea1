import { setTimeout as sleep } from 'node:timers/promises';
import type { Response, Test } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { PlatformConnection } from 'src/platform/platform-connection';
import { PlatformClient } from 'src/platform/platform.client';
import { PlatformService } from 'src/platform/platform.service';
import { useTestApp, type TestApp } from 'test/support/test-app';
import { faultsOf } from 'test/support/emulator-faults';
import { SHARD_REPORT } from 'test/support/shard-report';

function emulatorOf(t: TestApp): PlatformEmulator {
  const emulator = t.app.get(PlatformConnection).emulator;
  if (!emulator) throw new Error('expected demo mode');
  return emulator;
}

describe('demo mode', () => {
  const t = useTestApp();

  it('starts the emulator and says so in one log line', () => {
    expect(emulatorOf(t()).apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);
    const lines = t()
      .logs.lines.map((line) => String(line.msg))
      .filter((msg) => msg.startsWith('Demo mode'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(emulatorOf(t()).apiUrl);
  });

  it('reaches the demo guild through the client', async () => {
    const lookup = await t().app.get(PlatformService).getGuild(DEMO_IDS.community);
    expect(lookup).toMatchObject({ found: true, value: { name: 'Demo Community' } });
  });

  describe('GET /demo/oauth2-code', () => {
    it('issues a code for the default demo login (Alice, the owner of Demo Community) that the platform exchanges once', async () => {
      const res = await t().http().get('/demo/oauth2-code').expect(200);
      expect(res.body).toEqual({
        code: expect.stringMatching(/^[\w-]{20}$/),
        redirect_uri: 'http://localhost:3000/docs/oauth2-redirect.html',
        user_id: DEMO_IDS.alice,
        expires_in: 600,
        login_body: { code: res.body.code, redirect_uri: res.body.redirect_uri },
      });
      const client = t().app.get(PlatformClient);
      const grant = await client.exchangeCode(res.body.code, res.body.redirect_uri);
      expect((await client.getUser(grant.access_token)).id).toBe(DEMO_IDS.alice);
      await expect(client.exchangeCode(res.body.code, res.body.redirect_uri)).rejects.toMatchObject(
        {
          error: 'invalid_grant',
        },
      );
    });

    it('hands out the body that POST /oauth2 takes as it is', async () => {
      const issued = await t().http().get('/demo/oauth2-code').expect(200);
      const login = await t().http().post('/oauth2').send(issued.body.login_body).expect(200);
      expect(login.body.user.id).toBe(DEMO_IDS.alice);
    });

    it('issues codes for other demo users', async () => {
      const res = await t().http().get(`/demo/oauth2-code?user_id=${DEMO_IDS.carol}`).expect(200);
      expect(res.body.user_id).toBe(DEMO_IDS.carol);
    });

    it.each([
      ['an unknown user', '123', 404, 'NotFound'],
      ['a malformed id', 'abc', 400, 'BadRequest'],
      ['an id that is too long', '1'.repeat(21), 400, 'BadRequest'],
      // The one snowflake rule of every route: no leading zeros, at most 2^64 - 1.
      ['an id with a leading zero', '01100000000000000013', 400, 'BadRequest'],
      ['an id beyond 64 bits', '18446744073709551616', 400, 'BadRequest'],
    ])('refuses %s', async (_label, userId, status, code) => {
      const res = await t().http().get(`/demo/oauth2-code?user_id=${userId}`).expect(status);
      expect(res.body.code).toBe(code);
      if (status === 400) {
        expect(res.body.message).toBe(
          'Invalid request: user_id must be a snowflake (a decimal id of at most 20 digits)',
        );
      }
    });

    it('refuses unknown query parameters', async () => {
      const res = await t().http().get('/demo/oauth2-code?admin=1').expect(400);
      expect(res.body.code).toBe('BadRequest');
    });

    describe('with a PKCE challenge', () => {
      // RFC 7636 appendix B.
      const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
      const s256 = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
      const loginWith = async (query: string, codeVerifier?: string): Promise<Response> => {
        const issued = await t().http().get(`/demo/oauth2-code?${query}`).expect(200);
        return t()
          .http()
          .post('/oauth2')
          .send({
            code: issued.body.code,
            redirect_uri: issued.body.redirect_uri,
            ...(codeVerifier === undefined ? {} : { code_verifier: codeVerifier }),
          });
      };

      it('binds the code to the challenge: only its verifier logs in', async () => {
        const query = `code_challenge=${s256}&code_challenge_method=S256`;
        expect((await loginWith(query, verifier)).status).toBe(200);
        expect((await loginWith(query, `${verifier.slice(1)}x`)).status).toBe(400);
        expect((await loginWith(query)).status).toBe(400);
      });

      it('takes the challenge as plain when no method is given, as RFC 7636 says', async () => {
        expect((await loginWith(`code_challenge=${verifier}`, verifier)).status).toBe(200);
        expect((await loginWith(`code_challenge=${verifier}`, s256)).status).toBe(400);
      });

      it.each([
        [
          'a method without a challenge',
          'code_challenge_method=S256',
          'code_challenge_method needs a code_challenge',
        ],
        [
          'an unknown method',
          `code_challenge=${s256}&code_challenge_method=S512`,
          'Invalid request: code_challenge_method must be S256 or plain',
        ],
        [
          'a challenge that is too short',
          'code_challenge=abc',
          'Invalid request: code_challenge must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" and "~" (RFC 7636)',
        ],
      ])('refuses %s with 400', async (_name, query, message) => {
        const res = await t().http().get(`/demo/oauth2-code?${query}`).expect(400);
        expect(res.body).toMatchObject({ code: 'BadRequest', message });
      });
    });
  });
});

describe('the demo as the README walks it, as the default demo login', () => {
  const t = useTestApp();
  const settings = `/guilds/${DEMO_IDS.community}/settings`;
  let token: string;

  beforeAll(async () => {
    // README steps 1 and 2: a code from the demo's consent screen, exchanged for a login.
    const issued = await t().http().get('/demo/oauth2-code').expect(200);
    const login = await t()
      .http()
      .post('/oauth2')
      .send({ code: issued.body.code, redirect_uri: issued.body.redirect_uri })
      .expect(200);
    token = login.body.token as string;
  });

  const exec = (operation: string, fields: object): Test =>
    t()
      .http()
      .post(settings)
      .set('Authorization', `Bearer ${token}`)
      .send({ setting: 'guildroles', operation, fields });

  it('runs every settings operation in Demo Community', async () => {
    const helper = '1100000000000000104';
    const vip = '1100000000000000107';
    expect(
      (await exec('Create', { role_id: helper, perms: ['guildroles.view'], index: 2 })).status,
    ).toBe(200);
    expect((await exec('Create', { role_id: vip, perms: [], index: 3 })).status).toBe(200);
    expect((await exec('Update', { role_id: vip, perms: ['protection.view'] })).status).toBe(200);
    const reordered = await exec('Reorder', [
      { role_id: vip, index: 2 },
      { role_id: helper, index: 3 },
    ]);
    expect(reordered.status).toBe(200);
    const view = await exec('View', {});
    expect(view.status).toBe(200);
    expect(view.body.data).toEqual([
      expect.objectContaining({ role_id: vip, index: 2, perms: ['protection.view'] }),
      expect.objectContaining({ role_id: helper, index: 3, created_by: DEMO_IDS.alice }),
    ]);
    expect((await exec('Delete', { role_id: vip })).status).toBe(200);
    expect((await exec('Delete', { role_id: helper })).status).toBe(200);
  });

  it('reports a shard with an API token: the default demo login is a root user', async () => {
    const created = await t()
      .http()
      .post('/sessions')
      .set('Authorization', `Bearer ${token}`)
      .send({ name: 'demo shard', type: 'api', expiry: 3600 })
      .expect(201);
    await t()
      .http()
      .put('/internal/shards/0')
      .set('Authorization', created.body.token as string)
      .send(SHARD_REPORT)
      .expect(200);
  });
});

describe('the demo on another port, with the prefilled bodies of /docs as they are', () => {
  const t = useTestApp({ env: { PORT: '4100' } });
  const redirect = 'http://localhost:4100/docs/oauth2-redirect.html';

  interface Examples {
    paths: Record<
      string,
      Record<
        string,
        {
          requestBody: {
            content: Record<
              string,
              { examples: Record<string, { value: Record<string, unknown> }> }
            >;
          };
        }
      >
    >;
  }
  /** The first example of an operation's body: what Swagger UI prefills. */
  async function prefilled(path: string, method: string): Promise<Record<string, unknown>> {
    const document = (await t().http().get('/openapi.json').expect(200)).body as Examples;
    const examples = document.paths[path][method].requestBody.content['application/json'].examples;
    return Object.values(examples)[0].value;
  }

  it('hands out codes for its own port, and the prefilled login body names it', async () => {
    const issued = await t().http().get('/demo/oauth2-code').expect(200);
    expect(issued.body.redirect_uri).toBe(redirect);
    expect(issued.body.login_body).toEqual({ code: issued.body.code, redirect_uri: redirect });
    const body = await prefilled('/oauth2', 'post');
    expect(body.redirect_uri).toBe(redirect);
    const login = await t()
      .http()
      .post('/oauth2')
      .send({ ...body, code: issued.body.code })
      .expect(200);
    // The prefilled body of POST /sessions makes a token the next step (a shard report) takes.
    const created = await t()
      .http()
      .post('/sessions')
      .set('Authorization', `Bearer ${login.body.token as string}`)
      .send(await prefilled('/sessions', 'post'))
      .expect(201);
    expect(created.body.scope ?? null).toBeNull();
    await t()
      .http()
      .put('/internal/shards/0')
      .set('Authorization', created.body.token as string)
      .send(SHARD_REPORT)
      .expect(200);
  });
});

describe('cached platform lookups', () => {
  const t = useTestApp({ env: { PLATFORM_CACHE_TTL: '1' } });

  it('coalesces ten concurrent requests for one guild into one platform call', async () => {
    const platform = t().app.get(PlatformService);
    const before = emulatorOf(t()).countRequests('GET /guilds/:guild_id');
    const results = await Promise.all(
      Array.from({ length: 10 }, () => platform.getGuild(DEMO_IDS.botLab)),
    );
    expect(emulatorOf(t()).countRequests('GET /guilds/:guild_id') - before).toBe(1);
    for (const result of results) expect(result).toEqual(results[0]);
  });

  it('serves channels and members from the cache until the TTL expires', async () => {
    const platform = t().app.get(PlatformService);
    const emulator = emulatorOf(t());
    const count = (): number =>
      emulator.countRequests('GET /guilds/:guild_id/channels') +
      emulator.countRequests('GET /guilds/:guild_id/members/:user_id');
    const before = count();
    await platform.getGuildChannels(DEMO_IDS.community);
    await platform.getGuildMember(DEMO_IDS.community, DEMO_IDS.demoUser);
    await platform.getGuildChannels(DEMO_IDS.community);
    await platform.getGuildMember(DEMO_IDS.community, DEMO_IDS.demoUser);
    expect(count() - before).toBe(2);

    await sleep(1_100);
    await platform.getGuildChannels(DEMO_IDS.community);
    await platform.getGuildMember(DEMO_IDS.community, DEMO_IDS.demoUser);
    expect(count() - before).toBe(4);
  });

  it('caches "not found" answers too', async () => {
    const platform = t().app.get(PlatformService);
    const before = emulatorOf(t()).countRequests('GET /guilds/:guild_id');
    expect(await platform.getGuild(DEMO_IDS.sandbox)).toEqual({ found: false, missing: 'guild' });
    expect(await platform.getGuild(DEMO_IDS.sandbox)).toEqual({ found: false, missing: 'guild' });
    expect(emulatorOf(t()).countRequests('GET /guilds/:guild_id') - before).toBe(1);
  });

  it('does not cache failures', async () => {
    const platform = t().app.get(PlatformService);
    const emulator = emulatorOf(t());
    faultsOf(emulator).inject('GET /guilds/:guild_id', { kind: 'error', status: 500 }, 3);
    await expect(platform.getGuild('1100000000000000999')).rejects.toMatchObject({
      code: 'InternalError',
    });
    expect(await platform.getGuild('1100000000000000999')).toEqual({
      found: false,
      missing: 'guild',
    });
  });

  it("fetches the bot's own user once, at start", async () => {
    const platform = t().app.get(PlatformService);
    const botUserCalls = (): number =>
      emulatorOf(t()).requests.filter(
        (request) => request.route === 'GET /users/@me' && request.auth === 'bot',
      ).length;
    const users = await Promise.all([
      platform.getBotUser(),
      platform.getBotUser(),
      platform.getBotUser(),
    ]);
    await sleep(1_100);
    await platform.getBotUser();
    expect(users[0].id).toBe(DEMO_IDS.bot);
    expect(botUserCalls()).toBe(1);
  });
});

describe('cached platform lookups with Redis unreachable', () => {
  // Nothing listens on port 1: every Redis command fails at once.
  const t = useTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });

  it('still answers, from the platform and the in-process cache', async () => {
    const platform = t().app.get(PlatformService);
    const before = emulatorOf(t()).countRequests('GET /guilds/:guild_id');
    await expect(platform.getGuild(DEMO_IDS.community)).resolves.toMatchObject({ found: true });
    await expect(platform.getGuild(DEMO_IDS.community)).resolves.toMatchObject({ found: true });
    expect(emulatorOf(t()).countRequests('GET /guilds/:guild_id') - before).toBe(1);
  });
});
