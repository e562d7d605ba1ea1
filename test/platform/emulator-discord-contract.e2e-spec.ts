import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { MEMBER_READ_SCOPE } from 'src/platform/emulator/platform-emulator';
import { emulatorOf, loginAs } from 'test/support/auth';
import { checkEmulatorAnswers } from 'test/support/discord-spec';
import { faultsOf, type EmulatorFault } from 'test/support/emulator-faults';
import { DEMO_REDIRECT, useEmulator } from 'test/support/platform';
import { useTestApp } from 'test/support/test-app';

/**
 * The emulator answers as Discord's published OpenAPI document says (test/fixtures/discord-openapi,
 * with its allowlist): every route the service calls, with every status it can answer.
 */

const BOT = `Bot ${DEMO_SEED.application.bot_token}`;
const C = DEMO_IDS.community;

type Caller = 'bot' | 'user' | 'user without scope' | 'none';

async function bearer(emulator: PlatformEmulator, scopes: string[]): Promise<string> {
  const code = emulator.issueCode({
    userId: DEMO_IDS.demoUser,
    scopes,
    redirectUri: DEMO_REDIRECT,
  });
  const res = await fetch(`${emulator.apiUrl}/v10/oauth2/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: DEMO_REDIRECT,
      client_id: DEMO_SEED.application.id,
      client_secret: DEMO_SEED.application.secret,
    }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

async function call(
  emulator: PlatformEmulator,
  caller: Caller,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const authorization =
    caller === 'bot'
      ? BOT
      : caller === 'user'
        ? `Bearer ${await bearer(emulator, ['identify', 'guilds', MEMBER_READ_SCOPE])}`
        : caller === 'user without scope'
          ? `Bearer ${await bearer(emulator, ['identify'])}`
          : undefined;
  const res = await fetch(`${emulator.apiUrl}/v10${path}`, {
    method,
    headers: {
      ...(authorization ? { Authorization: authorization } : {}),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

describe("the emulator's answers against Discord's OpenAPI document", () => {
  const emulator = useEmulator();
  let checker: ReturnType<typeof checkEmulatorAnswers>;
  beforeEach(() => {
    checker = checkEmulatorAnswers(emulator());
  });
  afterEach(() => checker.stop());

  type Case = [string, Caller, string, string, number, unknown?];
  const cases: Case[] = [
    ['the bot', 'bot', 'GET', '/users/@me', 200],
    ['a user', 'user', 'GET', '/users/@me', 200],
    ['no token', 'none', 'GET', '/users/@me', 401],
    ['the bot', 'bot', 'GET', '/users/@me/guilds', 200],
    ['a user', 'user', 'GET', '/users/@me/guilds', 200],
    ['a token without guilds', 'user without scope', 'GET', '/users/@me/guilds', 401],
    ['a member', 'user', 'GET', `/users/@me/guilds/${C}/member`, 200],
    ['not a member', 'user', 'GET', `/users/@me/guilds/${DEMO_IDS.botLab}/member`, 404],
    ['without the scope', 'user without scope', 'GET', `/users/@me/guilds/${C}/member`, 401],
    ['the bot', 'bot', 'GET', `/guilds/${C}`, 200],
    ['an unknown guild', 'bot', 'GET', '/guilds/42', 404],
    ['a guild without the bot', 'bot', 'GET', `/guilds/${DEMO_IDS.sandbox}`, 403],
    ['a user token', 'user', 'GET', `/guilds/${C}`, 401],
    ['the bot', 'bot', 'GET', `/guilds/${C}/roles`, 200],
    ['a guild without the bot', 'bot', 'GET', `/guilds/${DEMO_IDS.sandbox}/roles`, 403],
    ['the bot', 'bot', 'GET', `/guilds/${C}/channels`, 200],
    ['a guild without the bot', 'bot', 'GET', `/guilds/${DEMO_IDS.sandbox}/channels`, 403],
    ['the bot', 'bot', 'GET', `/guilds/${C}/threads/active`, 200],
    ['an unknown guild', 'bot', 'GET', '/guilds/42/threads/active', 404],
    ['a member', 'bot', 'GET', `/guilds/${C}/members/${DEMO_IDS.demoUser}`, 200],
    ['the bot itself', 'bot', 'GET', `/guilds/${C}/members/${DEMO_IDS.bot}`, 200],
    ['not a member', 'bot', 'GET', `/guilds/${C}/members/${DEMO_IDS.dave}`, 404],
    ['an unknown user', 'bot', 'GET', `/guilds/${C}/members/42`, 404],
    ['the bot', 'bot', 'GET', `/applications/${DEMO_IDS.bot}/commands`, 200],
    ['another application', 'bot', 'GET', '/applications/42/commands', 403],
    ['the bot', 'bot', 'PUT', `/applications/${DEMO_IDS.bot}/commands`, 200, []],
    ['a body not a list', 'bot', 'PUT', `/applications/${DEMO_IDS.bot}/commands`, 400, {}],
    ['no route', 'bot', 'GET', '/nothing/here', 404],
  ];

  it.each(cases)(
    '%s: %s %s %s answers %d as the document says',
    // Rest parameters: Jest would take a sixth parameter, for rows without a body, as `done`.
    async (...[, caller, method, path, status, body]: Case) => {
      const answer = await call(emulator(), caller, method, path, body);
      expect(answer.status).toBe(status);
      expect(checker.violations()).toEqual([]);
      expect(checker.checked()).toBeGreaterThan(0);
    },
  );

  it('fills every field a full answer carries (nothing required left to defaults elsewhere)', async () => {
    const member = await call(emulator(), 'bot', 'GET', `/guilds/${C}/members/${DEMO_IDS.bot}`);
    expect(member.body).toMatchObject({
      user: { id: DEMO_IDS.bot, bot: true, flags: 0, public_flags: 0, primary_guild: null },
      flags: 0,
      pending: false,
    });
    const threads = await call(emulator(), 'bot', 'GET', `/guilds/${C}/threads/active`);
    expect(threads.body).toMatchObject({ members: [], has_more: false });
    for (const thread of (threads.body as { threads: object[] }).threads) {
      expect(thread).toMatchObject({
        owner_id: expect.stringMatching(/^\d+$/),
        thread_metadata: { archived: false, locked: false, auto_archive_duration: 1440 },
      });
    }
  });

  const faults: [string, EmulatorFault, number][] = [
    ['a per-route 429', { kind: 'rate_limit', retryAfter: 0.25 }, 429],
    ['a global 429', { kind: 'rate_limit', retryAfter: 1, global: true }, 429],
    ["a shared resource's 429", { kind: 'rate_limit', retryAfter: 2, shared: true }, 429],
    ['a 403', { kind: 'error', status: 403 }, 403],
  ];

  it.each(faults)('the test faults play %s as the document says', async (_, fault, status) => {
    faultsOf(emulator()).inject('GET /guilds/:guild_id', fault);
    expect((await call(emulator(), 'bot', 'GET', `/guilds/${C}`)).status).toBe(status);
    expect(checker.violations()).toEqual([]);
    expect(checker.checked()).toBe(1);
  });
});

describe("the emulator's rate limits against Discord's OpenAPI document", () => {
  let emulator: PlatformEmulator;
  beforeAll(async () => {
    emulator = await PlatformEmulator.start(
      DEMO_SEED,
      {},
      {
        rateLimits: {
          globalPerSecond: 3,
          routes: { 'GET /guilds/:guild_id': { limit: 1, windowMs: 60_000 } },
        },
        now: () => 1_000_000,
      },
    );
  });
  afterAll(() => emulator.close());

  it('answers 429 with retry_after and global, per route and globally', async () => {
    const checker = checkEmulatorAnswers(emulator);
    const statuses: number[] = [];
    const bodies: unknown[] = [];
    for (let i = 0; i < 4; i++) {
      const answer = await call(emulator, 'bot', 'GET', `/guilds/${C}`);
      statuses.push(answer.status);
      bodies.push(answer.body);
    }
    expect(statuses).toEqual([200, 429, 429, 429]);
    expect(bodies.slice(1)).toEqual([
      expect.objectContaining({ global: false, retry_after: expect.any(Number) }),
      expect.objectContaining({ global: false }),
      expect.objectContaining({ global: true, retry_after: expect.any(Number) }),
    ]);
    expect(checker.violations()).toEqual([]);
    expect(checker.checked()).toBe(4);
    checker.stop();
  });
});

describe("the emulator's answers to the service, against Discord's OpenAPI document", () => {
  const app = useTestApp();

  it('a login, the guild list and a guild, every answer as the document says', async () => {
    const checker = checkEmulatorAnswers(emulatorOf(app()));
    const { token } = await loginAs(app(), DEMO_IDS.demoUser);
    const auth = { Authorization: `Bearer ${token}` };
    await app().http().get('/users/@me/guilds').set(auth).expect(200);
    await app().http().get(`/users/@me/guilds/${C}`).set(auth).expect(200);
    checker.stop();
    expect(checker.violations()).toEqual([]);
    expect(checker.checked()).toBeGreaterThanOrEqual(2);
  });
});
