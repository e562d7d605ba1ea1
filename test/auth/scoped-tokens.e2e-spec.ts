import type { Response } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { databaseOf, loginAs, type TestLogin } from 'test/support/auth';
import { eventually } from 'test/support/eventually';
import { useTestApp } from 'test/support/test-app';

const COMMUNITY = DEMO_IDS.community;
const HELPER_ROLE = '1100000000000000104';
const MODERATOR_ROLE = '1100000000000000103';

describe('scoped API tokens', () => {
  const t = useTestApp();
  let owner: TestLogin;
  let moderator: TestLogin;

  beforeAll(async () => {
    owner = await loginAs(t(), DEMO_IDS.alice);
    moderator = await loginAs(t(), DEMO_IDS.demoUser);
  });

  const createToken = (login: TestLogin, scope?: unknown): Promise<Response> =>
    t()
      .http()
      .post('/sessions')
      .set('Authorization', `Bearer ${login.token}`)
      .send({
        name: 'integration',
        type: 'api',
        expiry: 3600,
        ...(scope === undefined ? {} : { scope }),
      });

  const tokenOf = async (login: TestLogin, scope?: unknown): Promise<string> => {
    const res = await createToken(login, scope);
    expect(res.status).toBe(201);
    return res.body.token as string;
  };

  const settings = (
    token: string,
    guildId: string,
    operation: string,
    fields: unknown,
  ): Promise<Response> =>
    t()
      .http()
      .post(`/guilds/${guildId}/settings`)
      .set('Authorization', token)
      .send({ setting: 'guildroles', operation, fields });

  /** A Create of an entry for the Helper role, with no permissions. */
  const createHelperEntry = (token: string): Promise<Response> =>
    settings(token, COMMUNITY, 'Create', { role_id: HELPER_ROLE, perms: [], index: 5 });

  it('stores the scope, and GET /sessions shows it with last_used_at', async () => {
    const scope = { guilds: [COMMUNITY], permissions: ['guildroles.view'] };
    const created = await createToken(owner, scope);
    expect(created.status).toBe(201);
    const listed = async (): Promise<Record<string, unknown>> => {
      const res = await t().http().get('/sessions').set('Authorization', owner.token).expect(200);
      return (res.body.sessions as Record<string, unknown>[]).find(
        (s) => s.id === created.body.session_id,
      )!;
    };
    expect(await listed()).toMatchObject({ scope, last_used_at: null });
    await t().http().get('/sessions/@me').set('Authorization', created.body.token).expect(200);
    // Written after the answer, without delaying it.
    const used = await eventually(listed, (session) => session.last_used_at !== null);
    expect(used.last_used_at).toEqual(expect.stringMatching(/^\d{4}-/));
    const [row] = await databaseOf(t()).query<Record<string, unknown>[]>(
      'SELECT scope_guilds, scope_permissions FROM sessions WHERE id = $1',
      [created.body.session_id],
    );
    expect(row).toEqual({ scope_guilds: [COMMUNITY], scope_permissions: ['guildroles.view'] });
  });

  it('keeps a guild-scoped token to its guilds: 403 naming them anywhere else', async () => {
    const token = await tokenOf(owner, { guilds: [COMMUNITY] });
    const mine = await t().http().get('/users/@me/guilds').set('Authorization', token).expect(200);
    expect((mine.body.guilds as { id: string }[]).map((g) => g.id)).toEqual([COMMUNITY]);
    expect(mine.body.bot_in_guilds).toEqual([COMMUNITY]);
    await t().http().get(`/users/@me/guilds/${COMMUNITY}`).set('Authorization', token).expect(200);
    for (const path of [
      `/users/@me/guilds/${DEMO_IDS.botLab}`,
      `/guilds/${DEMO_IDS.botLab}/settings`,
    ]) {
      const res = await t().http().get(path).set('Authorization', token).expect(403);
      expect(res.body).toEqual({
        message: `This API token is limited to the guilds ${COMMUNITY}`,
        code: 'Restricted',
      });
    }
    const write = await settings(token, DEMO_IDS.botLab, 'View', {});
    expect(write.status).toBe(403);
    expect(write.body.message).toBe(`This API token is limited to the guilds ${COMMUNITY}`);
  });

  it('limits a permission-scoped token to those permissions, naming them', async () => {
    const token = await tokenOf(owner, { permissions: ['guildroles.view'] });
    expect((await settings(token, COMMUNITY, 'View', {})).status).toBe(200);
    const create = await createHelperEntry(token);
    expect(create.status).toBe(403);
    expect(create.body).toEqual({
      message:
        'This API token is limited to the permissions guildroles.view; it cannot use guildroles.create',
      code: 'Restricted',
    });
    const rows = await t()
      .http()
      .post(`/guilds/${COMMUNITY}/settings`)
      .set('Authorization', owner.token)
      .send({ setting: 'guildroles', operation: 'View', fields: {} })
      .expect(200);
    expect(rows.body.data).toEqual([]);
  });

  it("intersects the scope with the user's own permissions at the time of each call", async () => {
    const token = await tokenOf(moderator, { permissions: ['guildroles.*'] });
    const before = await settings(token, COMMUNITY, 'View', {});
    expect(before.status).toBe(403);
    expect(before.body.message).toBe('You need the permission guildroles.view in this guild');
    // The owner gives the moderator role the View permission: the same token may now view…
    const granted = await t()
      .http()
      .post(`/guilds/${COMMUNITY}/settings`)
      .set('Authorization', owner.token)
      .send({
        setting: 'guildroles',
        operation: 'Create',
        fields: { role_id: MODERATOR_ROLE, perms: ['guildroles.view'], index: 1 },
      });
    expect(granted.status).toBe(200);
    expect((await settings(token, COMMUNITY, 'View', {})).status).toBe(200);
    // …but not create, which its user may not do either.
    const create = await createHelperEntry(token);
    expect(create.status).toBe(403);
    expect(create.body.message).toBe('You need the permission guildroles.create in this guild');
  });

  it('leaves a token without a scope as it was: everything its user may do', async () => {
    const token = await tokenOf(owner);
    const created = await settings(token, COMMUNITY, 'Create', {
      role_id: HELPER_ROLE,
      perms: ['guildroles.view'],
      index: 4,
    });
    expect(created.status).toBe(200);
    await t()
      .http()
      .get(`/users/@me/guilds/${DEMO_IDS.botLab}`)
      .set('Authorization', token)
      .expect(404);
  });

  it("keeps an owner's scoped token from handing out more than its scope", async () => {
    const token = await tokenOf(owner, { permissions: ['guildmembers.create'] });
    const member = (overrides: string[]): Promise<Response> =>
      t()
        .http()
        .post(`/guilds/${COMMUNITY}/settings`)
        .set('Authorization', token)
        .send({
          setting: 'guildmembers',
          operation: 'Create',
          fields: { user_id: DEMO_IDS.carol, perm_overrides: overrides },
        });
    const escalation = await member(['global.*']);
    expect(escalation.status).toBe(403);
    expect(escalation.body.code).toBe('Restricted');
    const stored = await databaseOf(t()).query<unknown[]>(
      'SELECT 1 FROM guild_members WHERE guild_id = $1 AND user_id = $2',
      [COMMUNITY, DEMO_IDS.carol],
    );
    expect(stored).toEqual([]);
    // Within the scope, the owner's token still acts above the hierarchy.
    expect((await member(['guildmembers.create'])).status).toBe(200);
  });

  it('lists only itself to a scoped token on GET /sessions; its user sees every session', async () => {
    const scope = { guilds: [COMMUNITY] };
    const created = await createToken(owner, scope);
    expect(created.status).toBe(201);
    const unscoped = await tokenOf(owner);
    const listed = async (token: string): Promise<Record<string, unknown>[]> =>
      (await t().http().get('/sessions').set('Authorization', token).expect(200)).body
        .sessions as Record<string, unknown>[];
    // When it was last used (this very request, perhaps) is beside the point here.
    const own = (await listed(created.body.token)).map((session) => ({
      ...session,
      last_used_at: undefined,
    }));
    expect(own).toEqual([
      {
        id: created.body.session_id,
        name: 'integration',
        user_id: DEMO_IDS.alice,
        type: 'api',
        created_at: expect.any(String),
        expiry: created.body.expiry,
        current: true,
        scope: { ...scope, permissions: null },
      },
    ]);
    for (const token of [owner.token, unscoped]) {
      const ids = (await listed(token)).map((session) => session.id);
      expect(ids).toEqual(expect.arrayContaining([owner.sessionId, created.body.session_id]));
    }
  });

  it("keeps a scoped token off the internal routes and off its user's other sessions", async () => {
    const token = await tokenOf(owner, { guilds: [COMMUNITY] });
    const shard = await t()
      .http()
      .put('/internal/shards/0')
      .set('Authorization', token)
      .send({ status: 'Ready', real_latency: 1, guilds: 1, users: 1, uptime: 1, total_uptime: 1 })
      .expect(403);
    expect(shard.body.message).toBe(
      'This API token is limited to a scope; internal routes need a token without one',
    );
    const other = await t()
      .http()
      .delete(`/sessions/${owner.sessionId}`)
      .set('Authorization', token)
      .expect(403);
    expect(other.body.message).toBe(
      'This API token is limited to a scope; it may revoke only itself',
    );
    const me = await t().http().get('/sessions/@me').set('Authorization', token).expect(200);
    await t().http().delete(`/sessions/${me.body.id}`).set('Authorization', token).expect(204);
    await t().http().get('/sessions/@me').set('Authorization', token).expect(401);
  });

  it.each([
    ['a null scope', null, 'scope', 'scope must be an object'],
    ['null guilds', { guilds: null }, 'scope.guilds', 'guilds must be an array'],
    [
      'null permissions',
      { permissions: null },
      'scope.permissions',
      'permissions must be an array',
    ],
    [
      'a negator beside global.*',
      { permissions: ['global.*', '~guildroles.delete'] },
      'scope.permissions',
      'scope.permissions cannot negate beside global.*, which grants everything',
    ],
    ['an empty scope', {}, 'scope', 'scope must limit guilds, permissions or both'],
    [
      'an empty guild list',
      { guilds: [] },
      'scope.guilds',
      'guilds must contain at least 1 elements',
    ],
    [
      'a guild that is not an id',
      { guilds: ['abc'] },
      'scope.guilds',
      'each of guilds must be a snowflake (a decimal id of at most 20 digits)',
    ],
    [
      'a guild twice',
      { guilds: [COMMUNITY, COMMUNITY] },
      'scope.guilds',
      "All guilds's elements must be unique",
    ],
    [
      '101 guilds',
      { guilds: Array.from({ length: 101 }, (_, i) => String(1000 + i)) },
      'scope.guilds',
      'guilds must contain no more than 100 elements',
    ],
    [
      'a malformed permission',
      { permissions: ['not a permission'] },
      'scope.permissions',
      'each of permissions must be a permission string such as guildroles.view',
    ],
    [
      'permissions that are not a list',
      { permissions: 'guildroles.view' },
      'scope.permissions',
      'permissions must be an array',
    ],
    ['a scope that is not an object', 'guildroles.view', 'scope', 'scope must be an object'],
    [
      'an unknown field in the scope',
      { guilds: [COMMUNITY], admin: true },
      'scope.admin',
      'property admin should not exist',
    ],
  ])('refuses %s with 400', async (_name, scope, field, message) => {
    const res = await createToken(owner, scope);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('BadRequest');
    expect(res.body.details).toEqual(
      expect.arrayContaining([expect.objectContaining({ field, message })]),
    );
  });
});
