import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { DemoBotReporter } from 'src/bot-reports/demo-bot-reporter';
import type { EmulatedRequest } from 'src/platform/emulator/platform-emulator';
import { emulatorOf, loginAs, loginOn } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';

/**
 * The platform's answers held back until `together` requests are under way at once (or 10 s, far
 * past any round trip, have passed: requests sent one after another then show as 1 in flight), and
 * how many were under way at once. A condition, not a pause: on a busy machine the calls a request
 * makes together may arrive some time apart, and are still counted together.
 */
function overlapMeter(
  emulator: PlatformEmulator,
  together: number,
): { routes: string[]; maxInFlight: () => number } {
  const routes: string[] = [];
  let inFlight = 0;
  let most = 0;
  let release = (): void => undefined;
  const all = new Promise<void>((resolve) => (release = resolve));
  emulator.intercept(async (route, _reply, closing) => {
    routes.push(route);
    inFlight += 1;
    most = Math.max(most, inFlight);
    if (inFlight >= together) release();
    try {
      await Promise.race([all, sleep(10_000, undefined, { signal: closing, ref: false })]);
    } finally {
      inFlight -= 1;
    }
  });
  return { routes, maxInFlight: () => most };
}

/**
 * A guild opened cold from the platform (the guild-state feed turned off): with membership known
 * (the demo bot reports it), every platform answer the guild's page needs is asked at once, so the
 * caller waits one platform round trip.
 */
describe('a guild opened cold from the platform', () => {
  // Answers expire at once, so every open below is cold.
  const t = useTestApp({ env: { PLATFORM_CACHE_TTL: '1', GUILD_STATE_FEED: 'false' } });
  afterEach(() => emulatorOf(t()).intercept(null));

  it('asks for the guild, its channels, threads and both members together', async () => {
    const login = await loginAs(t(), DEMO_IDS.carol);
    await sleep(1_100);
    const meter = overlapMeter(emulatorOf(t()), 5);
    const res = await t()
      .http()
      .get(`/users/@me/guilds/${DEMO_IDS.botLab}`)
      .set('Authorization', `Bearer ${login.token}`)
      .expect(200);
    expect(res.body.name).toBe('Bot Lab');
    // The bot's member with its token, the user's with theirs (guilds.members.read).
    expect(meter.routes.sort()).toEqual([
      'GET /guilds/:guild_id',
      'GET /guilds/:guild_id/channels',
      'GET /guilds/:guild_id/members/:user_id',
      'GET /guilds/:guild_id/threads/active',
      'GET /users/@me/guilds/:guild_id/member',
    ]);
    expect(meter.maxInFlight()).toBe(5);
  });

  it("serves the first View of a guild's settings in one round of calls", async () => {
    const login = await loginAs(t(), DEMO_IDS.alice);
    await sleep(1_100);
    const meter = overlapMeter(emulatorOf(t()), 5);
    await t()
      .http()
      .post(`/guilds/${DEMO_IDS.community}/settings`)
      .set('Authorization', `Bearer ${login.token}`)
      .send({ setting: 'guildroles', operation: 'View', fields: {} })
      .expect(200);
    expect(meter.routes).toHaveLength(5);
    expect(meter.maxInFlight()).toBe(5);
  });

  it('answers the settings schemas with no platform call at all', async () => {
    const login = await loginAs(t(), DEMO_IDS.alice);
    await sleep(1_100);
    const meter = overlapMeter(emulatorOf(t()), 5);
    await t()
      .http()
      .get(`/guilds/${DEMO_IDS.botLab}/settings`)
      .set('Authorization', `Bearer ${login.token}`)
      .expect(200);
    expect(meter.routes).toEqual([]);
  });
});

/**
 * A guild opened cold while the bot's guild state is live (the demo bot reports it,
 * docs/guild-state.md): the guild, its channels, threads and the bot's member come from the feed;
 * only the caller's own member is asked, with the caller's own token when the login granted
 * `guilds.members.read`, else with the bot's.
 */
describe("a guild opened cold from the bot's guild state", () => {
  const t = useTestApp({ env: { PLATFORM_CACHE_TTL: '1' } });
  beforeAll(() => t().app.get(DemoBotReporter).settled());
  afterEach(() => emulatorOf(t()).intercept(null));

  async function loginWith(
    userId: string,
    scopes: string[],
  ): Promise<{ token: string; calls: () => EmulatedRequest[] }> {
    const emulator = emulatorOf(t());
    // A login reads no member: the open below is cold without waiting for anything to expire.
    const token = await loginOn(t(), emulator, userId, scopes);
    const since = emulator.requests.length;
    return { token, calls: () => emulator.requests.slice(since) };
  }

  it('makes no bot-token call at all for a login that granted guilds.members.read', async () => {
    const login = await loginWith(DEMO_IDS.carol, ['identify', 'guilds', 'guilds.members.read']);
    const res = await t()
      .http()
      .get(`/users/@me/guilds/${DEMO_IDS.botLab}`)
      .set('Authorization', `Bearer ${login.token}`)
      .expect(200);
    expect(res.body.name).toBe('Bot Lab');
    expect(login.calls().map((call) => [call.route, call.auth])).toEqual([
      ['GET /users/@me/guilds/:guild_id/member', 'bearer'],
    ]);
  });

  it("asks the caller's member with the bot token for a login without that scope, and nothing else", async () => {
    const login = await loginWith(DEMO_IDS.alice, ['identify', 'guilds']);
    await t()
      .http()
      .post(`/guilds/${DEMO_IDS.community}/settings`)
      .set('Authorization', `Bearer ${login.token}`)
      .send({ setting: 'guildroles', operation: 'View', fields: {} })
      .expect(200);
    expect(
      login.calls().map((call) => [call.route, call.auth, call.url.endsWith(DEMO_IDS.alice)]),
    ).toEqual([['GET /guilds/:guild_id/members/:user_id', 'bot', true]]);
  });
});
