import { GrantService, MEMBER_READ_SCOPE } from 'src/auth/grant.service';
import { UserMemberService } from 'src/guilds/user-member.service';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import type { InvalidAnswerBudget } from 'src/platform/invalid-request-budget';
import {
  PlatformClient,
  PlatformRateLimitedError,
  PlatformScopeRefusedError,
} from 'src/platform/platform.client';
import { INVALID_REQUEST_BUDGET } from 'src/platform/platform.module';
import { PlatformService } from 'src/platform/platform.service';
import { databaseOf, emulatorOf, loginOn } from 'test/support/auth';
import { faultsOf } from 'test/support/emulator-faults';
import { useTestApp, type TestApp } from 'test/support/test-app';

const USER_ROUTE = 'GET /users/@me/guilds/:guild_id/member';
const BOT_MEMBER_ROUTE = 'GET /guilds/:guild_id/members/:user_id';
const WITH_SCOPE = ['identify', 'guilds', MEMBER_READ_SCOPE];

/** Logs `userId` in with a code granting `scopes`; returns the login session's token. */
const loginWith = (t: TestApp, userId: string, scopes: string[]): Promise<string> =>
  loginOn(t, emulatorOf(t), userId, scopes);

function calls(t: TestApp, since: number): { route: string; url: string; auth: string }[] {
  return emulatorOf(t)
    .requests.slice(since)
    .map(({ route, url, auth }) => ({ route, url, auth }));
}

async function grantOf(t: TestApp, userId: string): Promise<{ scopes: string; state: string }> {
  const [row] = await databaseOf(t).query<{ scopes: string; state: string }[]>(
    'SELECT grant_scopes AS scopes, grant_state AS state FROM users WHERE id = $1',
    [userId],
  );
  return row;
}

describe("the user's own member, read with the user's own grant", () => {
  const t = useTestApp();
  const ownMember = (guildId: string, userId: string): ReturnType<UserMemberService['ownMember']> =>
    t().app.get(UserMemberService).ownMember(guildId, userId);

  it("asks /users/@me/guilds/{id}/member with the user's bearer token, not the bot's route; a repeat is free", async () => {
    const emulator = emulatorOf(t());
    const authorizations: string[] = [];
    emulator.intercept((route, reply) => {
      if (route === USER_ROUTE) authorizations.push(String(reply.request.headers.authorization));
    });
    try {
      await loginWith(t(), DEMO_IDS.demoUser, WITH_SCOPE);
      expect(await grantOf(t(), DEMO_IDS.demoUser)).toEqual({
        scopes: 'identify guilds guilds.members.read',
        state: 'active',
      });
      const since = emulator.requests.length;
      const answer = await ownMember(DEMO_IDS.community, DEMO_IDS.demoUser);
      expect(calls(t(), since)).toEqual([
        {
          route: USER_ROUTE,
          url: `/api/v10/users/@me/guilds/${DEMO_IDS.community}/member`,
          auth: 'bearer',
        },
      ]);
      const accessToken = await t().app.get(GrantService).accessTokenFor(DEMO_IDS.demoUser);
      expect(authorizations).toEqual([`Bearer ${accessToken}`]);
      expect(emulator.state.grantForAccessToken(accessToken)?.userId).toBe(DEMO_IDS.demoUser);
      // A repeat costs nothing, and neither does the bot's lookup of the same member.
      expect(await ownMember(DEMO_IDS.community, DEMO_IDS.demoUser)).toEqual(answer);
      expect(
        await t().app.get(PlatformService).getGuildMember(DEMO_IDS.community, DEMO_IDS.demoUser),
      ).toEqual(answer);
      expect(emulator.requests).toHaveLength(since + 1);
      // The member the bot would have read.
      expect(answer).toEqual(
        await t().app.get(PlatformClient).getGuildMember(DEMO_IDS.community, DEMO_IDS.demoUser),
      );
      expect(answer).toMatchObject({ found: true, value: { user: { id: DEMO_IDS.demoUser } } });
    } finally {
      emulator.intercept(null);
    }
  });

  it('answers "not a member" for a guild the user is not in, at no cost to the invalid-request budget', async () => {
    await loginWith(t(), DEMO_IDS.carol, WITH_SCOPE);
    const emulator = emulatorOf(t());
    const since = emulator.requests.length;
    const invalid = emulator.invalidAnswers();
    // Carol is not in Sandbox (the bot is not either: the bot's route would answer 403).
    await expect(ownMember(DEMO_IDS.sandbox, DEMO_IDS.carol)).resolves.toEqual({
      found: false,
      missing: 'member',
    });
    expect(calls(t(), since).map((call) => call.route)).toEqual([USER_ROUTE]);
    expect(emulator.invalidAnswers()).toBe(invalid);
  });

  it('answers undefined for a login without the scope, which keeps working, without a call', async () => {
    const token = await loginWith(t(), DEMO_IDS.bob, ['identify', 'guilds']);
    expect(await grantOf(t(), DEMO_IDS.bob)).toEqual({
      scopes: 'identify guilds',
      state: 'active',
    });
    const emulator = emulatorOf(t());
    const since = emulator.requests.length;
    await expect(ownMember(DEMO_IDS.community, DEMO_IDS.bob)).resolves.toBeUndefined();
    expect(calls(t(), since)).toEqual([]);
    const info = await t()
      .http()
      .get(`/users/@me/guilds/${DEMO_IDS.community}`)
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    expect(info.body.name).toBe('Demo Community');
  });

  it('answers undefined for a user without a grant (never logged in)', async () => {
    const since = emulatorOf(t()).requests.length;
    await expect(ownMember(DEMO_IDS.community, DEMO_IDS.dave)).resolves.toBeUndefined();
    expect(calls(t(), since)).toEqual([]);
  });
});

describe("the user's own member when the platform refuses the user's token", () => {
  const t = useTestApp();
  const ownMember = (guildId: string, userId: string): ReturnType<UserMemberService['ownMember']> =>
    t().app.get(UserMemberService).ownMember(guildId, userId);
  const userRouteCalls = (): number => emulatorOf(t()).countRequests(USER_ROUTE);
  const budget = (): InvalidAnswerBudget =>
    t().app.get<InvalidAnswerBudget>(INVALID_REQUEST_BUDGET);

  it('the client: a 429 fails at once with the wait asked, a 403 is the scope refused, an unknown member is not a member', async () => {
    await loginWith(t(), DEMO_IDS.dave, WITH_SCOPE);
    const accessToken = await t().app.get(GrantService).accessTokenFor(DEMO_IDS.dave);
    const client = t().app.get(PlatformClient);
    const read = (): ReturnType<PlatformClient['getCurrentUserGuildMember']> =>
      client.getCurrentUserGuildMember(accessToken, DEMO_IDS.community);
    const faults = faultsOf(emulatorOf(t()));
    const before = userRouteCalls();
    faults.inject(USER_ROUTE, { kind: 'rate_limit', retryAfter: 5 });
    const limited = await read().catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(PlatformRateLimitedError);
    expect(limited).toMatchObject({ retryAfterMs: 5_000, code: 'InternalError' });
    expect(userRouteCalls()).toBe(before + 1);
    faults.inject(USER_ROUTE, {
      kind: 'respond',
      status: 403,
      body: { message: 'Missing Access', code: 50001 },
    });
    await expect(read()).rejects.toBeInstanceOf(PlatformScopeRefusedError);
    faults.inject(USER_ROUTE, {
      kind: 'respond',
      status: 404,
      body: { message: 'Unknown Member', code: 10007 },
    });
    await expect(read()).resolves.toEqual({ found: false, missing: 'member' });
  });

  it('a 429 is not waited out: undefined at once, the user left to the bot token for the wait', async () => {
    await loginWith(t(), DEMO_IDS.alice, WITH_SCOPE);
    // A wait the transport would take for a bot call (under its 10 s bound).
    faultsOf(emulatorOf(t())).inject(USER_ROUTE, { kind: 'rate_limit', retryAfter: 5 });
    const before = userRouteCalls();
    const invalid = budget().count();
    await expect(ownMember(DEMO_IDS.community, DEMO_IDS.alice)).resolves.toBeUndefined();
    // One request: the 429 was not retried. It counts against the address, as the platform does.
    expect(userRouteCalls()).toBe(before + 1);
    expect(budget().count()).toBe(invalid + 1);
    // Within the wait, the user's route is not asked again; the bot's lookup answers.
    await expect(ownMember(DEMO_IDS.community, DEMO_IDS.alice)).resolves.toBeUndefined();
    expect(userRouteCalls()).toBe(before + 1);
    const botCalls = emulatorOf(t()).countRequests(BOT_MEMBER_ROUTE);
    await expect(
      t().app.get(PlatformService).getGuildMember(DEMO_IDS.community, DEMO_IDS.alice),
    ).resolves.toMatchObject({ found: true, value: { user: { id: DEMO_IDS.alice } } });
    expect(emulatorOf(t()).countRequests(BOT_MEMBER_ROUTE)).toBe(botCalls + 1);
  });

  it('a 403 (the scope refused) gives undefined and leaves the user to the bot; the grant stays', async () => {
    const token = await loginWith(t(), DEMO_IDS.carol, WITH_SCOPE);
    faultsOf(emulatorOf(t())).inject(USER_ROUTE, {
      kind: 'respond',
      status: 403,
      body: { message: 'Missing Access', code: 50001 },
    });
    const before = userRouteCalls();
    await expect(ownMember(DEMO_IDS.community, DEMO_IDS.carol)).resolves.toBeUndefined();
    await expect(ownMember(DEMO_IDS.botLab, DEMO_IDS.carol)).resolves.toBeUndefined();
    expect(userRouteCalls()).toBe(before + 1);
    expect((await grantOf(t(), DEMO_IDS.carol)).state).toBe('active');
    await t().http().get('/users/@me/guilds').set('Authorization', `Bearer ${token}`).expect(200);
  });

  it('a 401 gives undefined and retires the grant: the user must log in again', async () => {
    const token = await loginWith(t(), DEMO_IDS.bob, WITH_SCOPE);
    faultsOf(emulatorOf(t())).inject(USER_ROUTE, {
      kind: 'respond',
      status: 401,
      body: { message: '401: Unauthorized', code: 0 },
    });
    await expect(ownMember(DEMO_IDS.community, DEMO_IDS.bob)).resolves.toBeUndefined();
    expect((await grantOf(t(), DEMO_IDS.bob)).state).toBe('dead');
    const res = await t()
      .http()
      .get('/users/@me/guilds')
      .set('Authorization', `Bearer ${token}`)
      .expect(403);
    expect(res.body).toEqual({
      code: 'Restricted',
      message: 'Your Discord authorization has expired or was revoked; log in again',
    });
  });
});
