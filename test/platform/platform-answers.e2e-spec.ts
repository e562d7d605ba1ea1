import fc from 'fast-check';
import type { Test } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { loginOn } from 'test/support/auth';
import {
  answerOf,
  answerSchemas,
  guildListOf,
  guildWorldOf,
  VARIATIONS,
  type GuildWorld,
  type Json,
  type Variation,
} from 'test/support/discord-arbitraries';
import { botAndAliceGuild, DEMO_REDIRECT, liveModeEnv, useEmulator } from 'test/support/platform';
import { createTestApp, type TestApp } from 'test/support/test-app';

/**
 * The service, through its HTTP routes, takes any guild answer Discord's OpenAPI document allows
 * (fast-check, from the document's schemas: test/support/discord-arbitraries.ts): the guild info
 * answers 200 as openapi.json says (the e2e harness checks every answer against it); an answer it
 * cannot use (a list that is null) answers as a platform failure does, and the log names the field.
 */

/** Runs per variation; a failure is reported as found (shrinking over HTTP would take minutes). */
const RUNS = 5;
const THREAD_TYPES = new Set([10, 11, 12]);
const MEMBER_READ = 'guilds.members.read';
/** The guild id the answers are made for, replaced by each run's own. */
const PLACEHOLDER = '1299999999999999999';

interface GuildInfo {
  channels: { channel: { id: string }; user: string; bot: string }[];
}

describe("GET /users/@me/guilds/{id} on the platform's answers as the document allows them", () => {
  const emulator = useEmulator();
  let app: TestApp;
  let token: string;
  let nextGuild = 1_300_000_000_000_000_000n;

  beforeAll(async () => {
    app = await createTestApp({ env: liveModeEnv(emulator()) });
    token = await loginOn(app, emulator(), DEMO_IDS.alice, ['identify', 'guilds', MEMBER_READ]);
  });
  afterAll(() => app?.close());

  /**
   * A new guild the bot and Alice are in, whose lookups answer `world` (made for the guild id
   * PLACEHOLDER: a new id per run, so that nothing cached from a run serves the next).
   */
  function guildAnswering(world: GuildWorld): string {
    nextGuild += 1n;
    const guildId = nextGuild.toString();
    emulator().state.addGuild(botAndAliceGuild(guildId));
    const answers = JSON.parse(
      JSON.stringify(world).replaceAll(PLACEHOLDER, guildId),
    ) as GuildWorld;
    const byPath: Record<string, unknown> = {
      [`/guilds/${guildId}`]: answers.guild,
      [`/guilds/${guildId}/channels`]: answers.channels,
      [`/guilds/${guildId}/threads/active`]: answers.threads,
      [`/guilds/${guildId}/members/${DEMO_IDS.bot}`]: answers.bot,
      [`/guilds/${guildId}/members/${DEMO_IDS.alice}`]: answers.user,
      [`/users/@me/guilds/${guildId}/member`]: answers.user,
    };
    emulator().intercept(async (_route, reply) => {
      const path = reply.request.url.replace(/^\/api\/v10/, '').split('?')[0];
      if (path in byPath) await reply.code(200).send(byPath[path]);
    });
    return guildId;
  }

  const worldOf = (variation: Variation): fc.Arbitrary<GuildWorld> =>
    guildWorldOf(variation, { guildId: PLACEHOLDER, botId: DEMO_IDS.bot, userId: DEMO_IDS.alice });

  const guildInfo = (guildId: string): Test =>
    app.http().get(`/users/@me/guilds/${guildId}`).set('Authorization', `Bearer ${token}`);

  it.each(Object.entries(VARIATIONS))(
    '%s: 200, with permissions for every channel',
    async (_, variation) => {
      await fc.assert(
        fc.asyncProperty(worldOf(variation), async (world) => {
          const res = await guildInfo(guildAnswering(world));
          expect(res.status).toBe(200);
          const listed = (res.body as GuildInfo).channels;
          for (const entry of listed) {
            expect(entry.user).toMatch(/^\d+$/);
            expect(entry.bot).toMatch(/^\d+$/);
          }
          // Every channel is listed; a thread (the document lets the channel list hold one) only
          // under a parent the guild has.
          const ids = world.channels
            .filter((channel) => !THREAD_TYPES.has(channel.type as number))
            .map((channel) => channel.id);
          expect(ids.filter((id) => !listed.some((entry) => entry.channel.id === id))).toEqual([]);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    },
  );

  it.each([
    ['the channel list is null', 'channels', 'the answer'],
    ['the guild has no @everyone role', 'guild', 'roles'],
  ])('%s: answered as a platform failure, the field named in the log', async (_, part, field) => {
    const [world] = fc.sample(worldOf(VARIATIONS['all optional fields']), { numRuns: 1, seed: 56 });
    const unusable =
      part === 'channels'
        ? { ...world, channels: null as unknown as Json[] }
        : { ...world, guild: { ...world.guild, roles: [] } };
    const res = await guildInfo(guildAnswering(unusable));
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      message: expect.any(String),
      code: 'InternalError',
      error_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(app.logs.text()).toContain(`answered 200 with an unusable ${field}`);
  });
});

describe("a login and the guild list on the platform's answers as the document allows them", () => {
  const emulator = useEmulator();
  let app: TestApp;
  const schemas = answerSchemas();

  beforeAll(async () => {
    app = await createTestApp({ env: liveModeEnv(emulator()) });
  });
  afterAll(() => app?.close());

  /** Answers a user token's `path` with `body`; the bot's own calls go on to the emulator. */
  function userRouteAnswers(path: string, body: unknown): void {
    emulator().intercept(async (_route, reply) => {
      const url = reply.request.url.replace(/^\/api\/v10/, '').split('?')[0];
      const bearer = reply.request.headers.authorization?.startsWith('Bearer ') ?? false;
      if (bearer && url === path) await reply.code(200).send(body);
    });
  }

  it.each(Object.entries(VARIATIONS))('%s: POST /oauth2 takes the user', async (_, variation) => {
    await fc.assert(
      fc.asyncProperty(answerOf(schemas.user, variation), async (user) => {
        userRouteAnswers('/users/@me', user);
        const code = emulator().issueCode({ userId: DEMO_IDS.alice, redirectUri: DEMO_REDIRECT });
        const res = await app.http().post('/oauth2').send({ code, redirect_uri: DEMO_REDIRECT });
        expect(res.status).toBe(200);
        expect((res.body as { user: { id: string } }).user.id).toBe((user as Json).id);
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
  });

  it.each(Object.entries(VARIATIONS))(
    '%s: GET /users/@me/guilds lists the guilds, or fails as the platform does for a null list',
    async (_, variation) => {
      const token = await loginOn(app, emulator(), DEMO_IDS.alice);
      const page = guildListOf(variation);
      await fc.assert(
        fc.asyncProperty(page, async (body) => {
          userRouteAnswers('/users/@me/guilds', body);
          const res = await app
            .http()
            .get('/users/@me/guilds?refresh=true')
            .set('Authorization', `Bearer ${token}`);
          const usable =
            Array.isArray(body) &&
            body.every((guild: Json) => /^\d+$/.test(String(guild.permissions)));
          expect(res.status).toBe(usable ? 200 : 500);
          if (usable) {
            const listed = (res.body as { guilds: { id: string }[] }).guilds.map((g) => g.id);
            expect(listed).toEqual((body as Json[]).map((guild) => guild.id));
          } else {
            expect(app.logs.text()).toContain('/users/@me/guilds answered 200 with an unusable');
          }
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    },
  );
});
