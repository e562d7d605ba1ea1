import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import type { EmulatorSeed, SeedGuild } from 'src/platform/emulator/emulator.seed';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { loginOn } from 'test/support/auth';
import { DEMO_REDIRECT, liveModeEnv, useEmulator } from 'test/support/platform';
import type { Test } from 'supertest';
import { createTestApp, type TestApp } from 'test/support/test-app';
import { describeShared, useTwoInstances } from 'test/support/two-instances';

/** A guild with nobody but the bot in it. */
function botGuild(id: bigint): SeedGuild {
  const guildId = id.toString();
  return {
    id: guildId,
    name: `filler ${guildId}`,
    icon: null,
    owner_id: DEMO_IDS.alice,
    roles: [{ id: guildId, name: '@everyone', permissions: '0', position: 0 }],
    channels: [],
    members: [{ user_id: DEMO_IDS.bot, roles: [], joined_at: '2024-01-01T00:00:00.000Z' }],
  };
}

const LOW = 1_000_000_000_000_000_000n;
const HIGH = 1_200_000_000_000_000_000n;
/**
 * The demo platform plus 1,000 guilds of the bot: 500 below every demo guild, 500 above, so the
 * bot's whole guild list would take 6 pages of 200 (it is never read whole).
 */
const SEED: EmulatorSeed = {
  ...DEMO_SEED,
  guilds: [
    ...DEMO_SEED.guilds,
    ...Array.from({ length: 500 }, (_, i) => botGuild(LOW + BigInt(i))),
    ...Array.from({ length: 500 }, (_, i) => botGuild(HIGH + BigInt(i))),
  ],
};

describe('GET /users/@me/guilds?refresh=true and the bot', () => {
  const platform = useEmulator(SEED);
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: liveModeEnv(platform()) });
  });
  afterAll(() => t.close());

  const login = (userId: string): Promise<string> => loginOn(t, platform(), userId);

  /** Requests the platform saw on the bot's own guild list. */
  const botListCalls = (emulator: PlatformEmulator): number =>
    emulator.requests.filter(
      (request) => request.route === 'GET /users/@me/guilds' && request.auth === 'bot',
    ).length;

  async function botInGuilds(token: string, query = ''): Promise<string[]> {
    const res = await t
      .http()
      .get(`/users/@me/guilds${query}`)
      .set('Authorization', token)
      .expect(200);
    return res.body.bot_in_guilds as string[];
  }

  const guildInfo = (token: string, guildId: string): Test =>
    t.http().get(`/users/@me/guilds/${guildId}`).set('Authorization', token);

  it('shows a guild the bot has just joined once the list is refreshed, and serves it at once', async () => {
    const token = await login(DEMO_IDS.demoUser);
    expect(await botInGuilds(token)).toEqual([DEMO_IDS.community]);
    // The demo user's two guilds lie in one range of the bot's list: one call, never all six pages.
    expect(botListCalls(platform())).toBe(1);
    await guildInfo(token, DEMO_IDS.sandbox).expect(404);

    platform().state.addMember(DEMO_IDS.sandbox, {
      user_id: DEMO_IDS.bot,
      roles: [],
      joined_at: '2025-01-01T00:00:00.000Z',
    });
    // "Not in it" was just learned: for a few seconds it answers without asking again, so an id
    // sent over and over costs one call.
    let before = botListCalls(platform());
    await guildInfo(token, DEMO_IDS.sandbox).expect(404);
    expect(botListCalls(platform())).toBe(before);
    // The list read with refresh=true (what a dashboard does after inviting the bot) learns the
    // join, and the guild is served at once, on either route.
    expect(await botInGuilds(token, '?refresh=true')).toEqual([
      DEMO_IDS.community,
      DEMO_IDS.sandbox,
    ]);
    expect(botListCalls(platform()) - before).toBe(1);
    const info = await guildInfo(token, DEMO_IDS.sandbox).expect(200);
    expect(info.body.name).toBe('Demo Sandbox');
    await t
      .http()
      .get(`/guilds/${DEMO_IDS.sandbox}/settings`)
      .set('Authorization', token)
      .expect(200);
    expect(await botInGuilds(token)).toEqual([DEMO_IDS.community, DEMO_IDS.sandbox]);
    before = botListCalls(platform());
    // What was learned stays: no call for the guild itself.
    await guildInfo(token, DEMO_IDS.sandbox).expect(200);
    expect(botListCalls(platform())).toBe(before);
  });

  it('drops a guild the bot has left, and takes it back when the bot returns', async () => {
    const token = await login(DEMO_IDS.carol);
    expect(await botInGuilds(token)).toEqual([DEMO_IDS.community, DEMO_IDS.botLab]);
    const botMember = platform()
      .state.guild(DEMO_IDS.botLab)
      ?.members.find((member) => member.user_id === DEMO_IDS.bot);
    if (!botMember) throw new Error('the seed has the bot in the bot lab');
    platform().state.removeMember(DEMO_IDS.botLab, DEMO_IDS.bot);
    // What was learned still says the bot is there: the guild's own lookup says otherwise.
    await guildInfo(token, DEMO_IDS.botLab).expect(404);

    expect(await botInGuilds(token, '?refresh=true')).toEqual([DEMO_IDS.community]);
    expect(await botInGuilds(token)).toEqual([DEMO_IDS.community]);
    const perGuild = platform().countRequests('GET /guilds/:guild_id');
    await guildInfo(token, DEMO_IDS.botLab).expect(404);
    expect(platform().countRequests('GET /guilds/:guild_id')).toBe(perGuild);

    platform().state.addMember(DEMO_IDS.botLab, botMember);
    expect(await botInGuilds(token, '?refresh=true')).toEqual([
      DEMO_IDS.community,
      DEMO_IDS.botLab,
    ]);
    // The guild's cached "cannot see it" answer was dropped with the refresh.
    const info = await guildInfo(token, DEMO_IDS.botLab).expect(200);
    expect(info.body.name).toBe('Bot Lab');
  });

  it('makes at most one call per guild of the user, however many guilds the bot is in', async () => {
    // Dave's guilds are spread over the bot's list: one far below, one in the middle, one far above.
    const low = (LOW + 3n).toString();
    const high = (HIGH + 499n).toString();
    for (const guildId of [low, high]) {
      platform().state.addMember(guildId, {
        user_id: DEMO_IDS.dave,
        roles: [],
        joined_at: '2025-01-01T00:00:00.000Z',
      });
    }
    const token = await login(DEMO_IDS.dave);
    const before = botListCalls(platform());
    const bot = await botInGuilds(token, '?refresh=true');
    expect(bot).toEqual([low, DEMO_IDS.sandbox, high]);
    const calls = botListCalls(platform()) - before;
    expect(calls).toBeLessThanOrEqual(3);
  });
});

describeShared('a refresh on one of two instances', () => {
  const platform = useEmulator();
  const apps = useTwoInstances(() => ({
    ...liveModeEnv(platform()),
    REDIS_KEY_PREFIX: `bot-refresh-${Date.now()}:`,
    PLATFORM_CACHE_TTL: '1',
  }));

  it('reaches the other instance within PLATFORM_CACHE_TTL', async () => {
    const [a, b] = apps();
    const code = platform().issueCode({ userId: DEMO_IDS.demoUser, redirectUri: DEMO_REDIRECT });
    const login = await a.http().post('/oauth2').send({ code, redirect_uri: DEMO_REDIRECT });
    const token = login.body.token as string;
    const botInGuilds = async (app: TestApp, query = ''): Promise<string[]> => {
      const res = await app
        .http()
        .get(`/users/@me/guilds${query}`)
        .set('Authorization', token)
        .expect(200);
      return res.body.bot_in_guilds as string[];
    };
    // Both instances hold the bot's guild list in memory.
    expect(await botInGuilds(a)).toEqual([DEMO_IDS.community]);
    expect(await botInGuilds(b)).toEqual([DEMO_IDS.community]);
    platform().state.addMember(DEMO_IDS.sandbox, {
      user_id: DEMO_IDS.bot,
      roles: [],
      joined_at: '2025-01-01T00:00:00.000Z',
    });
    expect(await botInGuilds(a, '?refresh=true')).toEqual([DEMO_IDS.community, DEMO_IDS.sandbox]);
    await sleep(1_100);
    expect(await botInGuilds(b)).toEqual([DEMO_IDS.community, DEMO_IDS.sandbox]);
    await b
      .http()
      .get(`/users/@me/guilds/${DEMO_IDS.sandbox}`)
      .set('Authorization', token)
      .expect(200);
  });
});
