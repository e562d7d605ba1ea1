import { Logger } from '@nestjs/common';
import { OverwriteType, PermissionFlagsBits as P } from 'discord-api-types/v10';
import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import type { EmulatorSeed } from 'src/platform/emulator/emulator.seed';
import { bucketOf } from 'src/platform/emulator/emulator-rate-limits';
import {
  MEMBER_READ_SCOPE,
  PlatformEmulator,
  type EmulatorOptions,
} from 'src/platform/emulator/platform-emulator';
import { DEMO_REDIRECT } from 'test/support/platform';

const BOT = { Authorization: `Bot ${DEMO_SEED.application.bot_token}` };
const BASIC = {
  Authorization: `Basic ${Buffer.from(`${DEMO_SEED.application.id}:${DEMO_SEED.application.secret}`).toString('base64')}`,
  'Content-Type': 'application/x-www-form-urlencoded',
};
const C = DEMO_IDS.community;
const id = (n: number): string => `11000000000000001${String(n).padStart(2, '0')}`;
const CHANNEL = {
  general: id(24),
  welcomeThread: id(26),
  staff: id(31),
  staffChat: id(33),
  noBots: id(34),
};
const MEMBER_ROUTE = 'GET /users/@me/guilds/:guild_id/member';
const UNKNOWN_GUILD = { message: 'Unknown Guild', code: 10004 };
const UNAUTHORIZED = { message: '401: Unauthorized', code: 0 };

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** An emulator of its own for each test: they change its guilds and spend its rate limits. */
function useOwnEmulator(
  seed: EmulatorSeed = DEMO_SEED,
  options: EmulatorOptions = {},
): () => PlatformEmulator {
  let emulator: PlatformEmulator | undefined;
  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  beforeEach(async () => {
    emulator = await PlatformEmulator.start(seed, {}, options);
  });
  afterEach(async () => {
    await emulator?.close();
  });
  return () => {
    if (!emulator) throw new Error('the emulator is not running');
    return emulator;
  };
}

async function get(
  emulator: PlatformEmulator,
  path: string,
  headers: Record<string, string>,
): Promise<Answer> {
  const res = await fetch(`${emulator.apiUrl}/v10${path}`, { headers });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

/** A user's access token, through the token endpoint, for a code with `scopes` (or the seed's). */
async function userToken(
  emulator: PlatformEmulator,
  userId: string,
  scopes?: string[],
): Promise<Record<string, string>> {
  const code = emulator.issueCode({ userId, scopes, redirectUri: DEMO_REDIRECT });
  const res = await fetch(`${emulator.apiUrl}/v10/oauth2/token`, {
    method: 'POST',
    headers: BASIC,
    body: `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(DEMO_REDIRECT)}`,
  });
  const grant = (await res.json()) as { access_token: string; scope: string };
  return { Authorization: `Bearer ${grant.access_token}` };
}

const memberPath = (guildId: string): string => `/users/@me/guilds/${guildId}/member`;

describe('emulator: channels the bot cannot view, over REST', () => {
  const emulator = useOwnEmulator();

  it('omits them from the channel list, and shows a category with a channel the bot can view', async () => {
    const res = await get(emulator(), `/guilds/${C}/channels`, BOT);
    expect(res.status).toBe(200);
    const ids = (res.body as { id: string }[]).map((channel) => channel.id);
    expect(ids).toHaveLength(12);
    expect(ids).not.toContain(CHANNEL.staffChat);
    expect(ids).not.toContain(CHANNEL.noBots);
    expect(ids).toContain(CHANNEL.staff);
  });

  it('lists a channel as soon as the bot is let in', async () => {
    const state = emulator().state;
    const staffChat = state.guild(C)?.channels.find((c) => c.id === CHANNEL.staffChat);
    if (!staffChat) throw new Error('the seed has staff-chat');
    state.upsertChannel(C, {
      ...staffChat,
      permission_overwrites: [
        ...(staffChat.permission_overwrites ?? []),
        {
          id: DEMO_IDS.bot,
          type: OverwriteType.Member,
          allow: P.ViewChannel.toString(),
          deny: '0',
        },
      ],
    });
    const res = await get(emulator(), `/guilds/${C}/channels`, BOT);
    expect((res.body as { id: string }[]).map((c) => c.id)).toContain(CHANNEL.staffChat);
  });

  it('omits the active threads whose channel the bot cannot view', async () => {
    const state = emulator().state;
    const general = state.guild(C)?.channels.find((c) => c.id === CHANNEL.general);
    if (!general) throw new Error('the seed has general');
    const before = await get(emulator(), `/guilds/${C}/threads/active`, BOT);
    expect((before.body as { threads: { id: string }[] }).threads.map((t) => t.id)).toEqual([
      CHANNEL.welcomeThread,
    ]);
    state.upsertChannel(C, {
      ...general,
      permission_overwrites: [
        { id: C, type: OverwriteType.Role, allow: '0', deny: P.ViewChannel.toString() },
      ],
    });
    const after = await get(emulator(), `/guilds/${C}/threads/active`, BOT);
    expect(after).toMatchObject({ status: 200, body: { threads: [], members: [] } });
  });
});

describe('emulator: GET /users/@me/guilds/{guild_id}/member', () => {
  const emulator = useOwnEmulator();

  it("answers the user's member, as the bot's member route does", async () => {
    const user = await userToken(emulator(), DEMO_IDS.demoUser, ['identify', MEMBER_READ_SCOPE]);
    const own = await get(emulator(), memberPath(C), user);
    const byBot = await get(emulator(), `/guilds/${C}/members/${DEMO_IDS.demoUser}`, BOT);
    expect(own.status).toBe(200);
    expect(own.body).toEqual(byBot.body);
    expect(own.body).toMatchObject({
      user: { id: DEMO_IDS.demoUser },
      nick: 'Demo Mod',
      roles: [id(3), id(8), id(9), id(6)],
      communication_disabled_until: null,
    });
  });

  it('answers in a guild the bot is not in: the route is the user’s, not the bot’s', async () => {
    const user = await userToken(emulator(), DEMO_IDS.demoUser, [MEMBER_READ_SCOPE]);
    const res = await get(emulator(), memberPath(DEMO_IDS.sandbox), user);
    expect(res).toMatchObject({ status: 200, body: { user: { id: DEMO_IDS.demoUser } } });
  });

  it.each([
    ['a guild the user is not in', DEMO_IDS.botLab],
    ['an unknown guild', '42'],
    ['a malformed guild id', 'abc'],
  ])('answers 404 Unknown Guild for %s', async (_label, guildId) => {
    const user = await userToken(emulator(), DEMO_IDS.demoUser, [MEMBER_READ_SCOPE]);
    const res = await get(emulator(), memberPath(guildId), user);
    expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: UNKNOWN_GUILD });
  });

  it.each([
    [
      'a token without guilds.members.read',
      async () => userToken(emulator(), DEMO_IDS.demoUser, ['identify', 'guilds']),
    ],
    ['an unknown token', () => Promise.resolve({ Authorization: 'Bearer nope' })],
    ['no token', () => Promise.resolve({})],
  ])('answers 401 for %s', async (_label, headers) => {
    const res = await get(emulator(), memberPath(C), await headers());
    expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: UNAUTHORIZED });
  });
});

describe("emulator: a seed's login scopes", () => {
  const emulator = useOwnEmulator({ ...DEMO_SEED, login_scopes: ['identify', 'guilds'] });

  it('are those of a code issued without naming any', async () => {
    const user = await userToken(emulator(), DEMO_IDS.carol);
    expect((await get(emulator(), memberPath(C), user)).status).toBe(401);
    const scoped = await userToken(emulator(), DEMO_IDS.carol, [
      'identify',
      'guilds',
      MEMBER_READ_SCOPE,
    ]);
    expect((await get(emulator(), memberPath(C), scoped)).status).toBe(200);
  });
});

describe('emulator: the member route under the rate limits', () => {
  const NOW = 1_700_000_000_000;
  const emulator = useOwnEmulator(DEMO_SEED, { rateLimits: {}, now: () => NOW });

  it('lets 5 requests in 5 s through per token and guild, then answers 429 scoped to the user', async () => {
    const user = await userToken(emulator(), DEMO_IDS.demoUser, [MEMBER_READ_SCOPE]);
    const answers: Answer[] = [];
    for (let n = 0; n < 6; n++) answers.push(await get(emulator(), memberPath(C), user));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(
      Object.fromEntries(
        ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-bucket'].map((h) => [
          h,
          answers[0].headers.get(h),
        ]),
      ),
    ).toEqual({
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '4',
      'x-ratelimit-bucket': bucketOf(MEMBER_ROUTE),
    });
    const refused = answers[5];
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.headers.get('x-ratelimit-scope')).toBe('user');
    expect(refused.body).toEqual({
      message: 'You are being rate limited.',
      retry_after: 5,
      global: false,
      code: 0,
    });
    // Another guild, and another user, have buckets of their own.
    expect((await get(emulator(), memberPath(DEMO_IDS.sandbox), user)).status).toBe(200);
    const carol = await userToken(emulator(), DEMO_IDS.carol, [MEMBER_READ_SCOPE]);
    expect((await get(emulator(), memberPath(C), carol)).status).toBe(200);
  });
});
