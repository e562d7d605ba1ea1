import type { Response } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { createApiToken, databaseOf, emulatorOf, loginAs } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';
import { actor, GUILD, ok, ROLE } from 'test/support/demo-world';

// Every test here runs on the embedded engine by default and on PostgreSQL with DATABASE_URL.

interface Case {
  number: number;
  guild_id: string;
  user_id: string;
  moderator_id: string;
  action: string;
  reason: string | null;
  created_at: string;
}

const BOB = DEMO_IDS.bob;
const CAROL = DEMO_IDS.carol;
const MOD = DEMO_IDS.demoUser;

describe('moderation cases', () => {
  // Alice is the demo's root user (ROOT_USERS), owner of the demo guild.
  const t = useTestApp();
  let botToken: string;
  let moderator: string;

  const record = (body: unknown, token = botToken, guildId: string = GUILD): Promise<Response> =>
    t()
      .http()
      .post(`/guilds/${guildId}/cases`)
      .set('Authorization', `Bearer ${token}`)
      .send(body as object);
  const list = (
    token: string,
    query: Record<string, string> = {},
    guildId: string = GUILD,
  ): Promise<Response> =>
    t().http().get(`/guilds/${guildId}/cases`).query(query).set('Authorization', `Bearer ${token}`);
  const recorded = async (body: Record<string, unknown>): Promise<Case> => {
    const res = await record(body);
    expect(res.status).toBe(201);
    return res.body as Case;
  };

  beforeAll(async () => {
    const alice = await loginAs(t(), DEMO_IDS.alice);
    botToken = (await createApiToken(t(), alice.token, { name: 'bot' })).token;
    // The moderator role holds cases.view; carol (a helper) holds nothing.
    const owner = await actor(t(), DEMO_IDS.alice);
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.moderator,
        perms: ['cases.view'],
        index: 3,
      }),
    );
    moderator = (await loginAs(t(), MOD)).token;
  });

  it('records cases with the API token of a root user, numbered per guild from 1', async () => {
    const first = await recorded({
      user_id: BOB,
      moderator_id: MOD,
      action: 'warn',
      reason: 'Spamming invites in #general',
    });
    expect(first).toEqual({
      number: 1,
      guild_id: GUILD,
      user_id: BOB,
      moderator_id: MOD,
      action: 'warn',
      reason: 'Spamming invites in #general',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const second = await recorded({ user_id: CAROL, moderator_id: MOD, action: 'note' });
    expect(second).toMatchObject({ number: 2, reason: null });
    // Another guild counts from 1.
    const elsewhere = await record(
      { user_id: BOB, moderator_id: MOD, action: 'ban', reason: null },
      botToken,
      DEMO_IDS.botLab,
    );
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.body).toMatchObject({ number: 1, guild_id: DEMO_IDS.botLab });
    const rows = await databaseOf(t()).query<Record<string, unknown>[]>(
      'SELECT guild_id, number, user_id, moderator_id, action, reason FROM moderation_cases ORDER BY guild_id, number',
    );
    expect(rows).toEqual([
      {
        guild_id: GUILD,
        number: 1,
        user_id: BOB,
        moderator_id: MOD,
        action: 'warn',
        reason: 'Spamming invites in #general',
      },
      {
        guild_id: GUILD,
        number: 2,
        user_id: CAROL,
        moderator_id: MOD,
        action: 'note',
        reason: null,
      },
      {
        guild_id: DEMO_IDS.botLab,
        number: 1,
        user_id: BOB,
        moderator_id: MOD,
        action: 'ban',
        reason: null,
      },
    ]);
  });

  it('gives concurrent cases of one guild distinct numbers, none skipped', async () => {
    const guildId = '1100000000000000777';
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        record(
          { user_id: BOB, moderator_id: MOD, action: 'mute', reason: `#${i}` },
          botToken,
          guildId,
        ),
      ),
    );
    expect(answers.map((res) => res.status)).toEqual(Array(12).fill(201));
    const numbers = answers.map((res) => (res.body as Case).number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });

  it('lets only root users record, with an unscoped API token', async () => {
    const alice = await loginAs(t(), DEMO_IDS.alice);
    const body = { user_id: BOB, moderator_id: MOD, action: 'warn' };
    // A login session: API tokens only.
    expect((await record(body, alice.token)).status).toBe(403);
    const carol = await loginAs(t(), CAROL);
    const carolToken = (await createApiToken(t(), carol.token, { name: 'script' })).token;
    const notRoot = await record(body, carolToken);
    expect(notRoot.status).toBe(403);
    expect(notRoot.body).toEqual({
      code: 'Restricted',
      message: "Only the bot's operators (ROOT_USERS) may use internal routes",
    });
    const noToken = await t().http().post(`/guilds/${GUILD}/cases`).send(body);
    expect(noToken.status).toBe(401);
    expect(noToken.body.code).toBe('NoAuthToken');
  });

  it.each([
    ['no user_id', { moderator_id: MOD, action: 'warn' }, 'user_id is required'],
    [
      'a user_id that is no snowflake',
      { user_id: 'bob', moderator_id: MOD, action: 'warn' },
      'user_id must be a snowflake (a decimal id of at most 20 digits)',
    ],
    ['no moderator_id', { user_id: BOB, action: 'warn' }, 'moderator_id is required'],
    ['no action', { user_id: BOB, moderator_id: MOD }, 'action is required'],
    [
      'an unknown action',
      { user_id: BOB, moderator_id: MOD, action: 'smite' },
      'action must be one of note, warn, mute, unmute, kick, ban, unban',
    ],
    [
      'a reason that is no string',
      { user_id: BOB, moderator_id: MOD, action: 'warn', reason: 42 },
      'reason must be a string',
    ],
    [
      'a reason of 1,001 characters',
      { user_id: BOB, moderator_id: MOD, action: 'warn', reason: 'x'.repeat(1001) },
      'reason must be at most 1000 characters',
    ],
    [
      'an unknown field',
      { user_id: BOB, moderator_id: MOD, action: 'warn', extra: 1 },
      'property extra should not exist',
    ],
  ])('refuses a case with %s', async (_label, body, message) => {
    const res = await record(body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('BadRequest');
    expect(res.body.message).toContain(message);
  });

  it('costs no platform call to record, and none to list once the guild is open (docs/request-costs.md)', async () => {
    const emulator = emulatorOf(t());
    expect((await list(moderator)).status).toBe(200);
    const before = emulator.requests.length;
    await recorded({ user_id: BOB, moderator_id: MOD, action: 'note' });
    expect((await list(moderator, { limit: '100' })).status).toBe(200);
    expect((await list(moderator, { user_id: BOB })).status).toBe(200);
    expect(emulator.requests.slice(before).map((request) => request.route)).toEqual([]);
  });

  it('refuses a malformed guild id', async () => {
    const res = await record(
      { user_id: BOB, moderator_id: MOD, action: 'warn' },
      botToken,
      'guild',
    );
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('guild_id must be a snowflake');
    expect((await list(moderator, {}, 'guild')).status).toBe(400);
  });

  describe('listing', () => {
    const guildId = GUILD;
    let all: Case[];

    beforeAll(async () => {
      // Cases 1 and 2 come from the first test when run in order; these follow them.
      for (const [user, action] of [
        [BOB, 'mute'],
        [CAROL, 'warn'],
        [BOB, 'unmute'],
        [BOB, 'kick'],
      ] as const) {
        await recorded({ user_id: user, moderator_id: MOD, action });
      }
      const res = await list(moderator, { limit: '100' });
      expect(res.status).toBe(200);
      all = (res.body as { cases: Case[] }).cases;
    });

    it("lists a guild's cases newest first to a member holding cases.view", () => {
      const numbers = all.map((c) => c.number);
      expect(numbers).toEqual([...numbers].sort((a, b) => b - a));
      expect(all.every((c) => c.guild_id === guildId)).toBe(true);
      expect(all.length).toBeGreaterThanOrEqual(4);
    });

    it('pages with limit and next_cursor, to the last page', async () => {
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const res = await list(moderator, { limit: '2', ...(cursor ? { cursor } : {}) });
        expect(res.status).toBe(200);
        const page = res.body as { cases: Case[]; next_cursor: string | null };
        expect(page.cases.length).toBeLessThanOrEqual(2);
        seen.push(...page.cases.map((c) => c.number));
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(seen).toEqual(all.map((c) => c.number));
    });

    it('filters by the member acted on', async () => {
      const res = await list(moderator, { user_id: BOB });
      expect(res.status).toBe(200);
      const cases = (res.body as { cases: Case[] }).cases;
      expect(cases.map((c) => c.number)).toEqual(
        all.filter((c) => c.user_id === BOB).map((c) => c.number),
      );
      const none = await list(moderator, { user_id: DEMO_IDS.dave });
      expect(none.body).toEqual({ cases: [], next_cursor: null });
    });

    it('refuses a member without cases.view, and a token scoped without it', async () => {
      const carol = await loginAs(t(), CAROL);
      const res = await list(carol.token);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        code: 'Restricted',
        message: 'You need the permission cases.view in this guild',
      });
      const modLogin = await loginAs(t(), MOD);
      const scoped = (
        await createApiToken(t(), modLogin.token, {
          name: 'scoped',
          scope: { permissions: ['guildroles.view'] },
        })
      ).token;
      const limited = await list(scoped);
      expect(limited.status).toBe(403);
      expect(limited.body.message).toBe(
        'This API token is limited to the permissions guildroles.view; it cannot use cases.view',
      );
    });

    it('answers 404 for a guild the bot is not in', async () => {
      const res = await list(moderator, {}, DEMO_IDS.sandbox);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NotFound');
    });

    it.each([
      [{ limit: '0' }, 'limit must be a whole number from 1 to 100'],
      [{ limit: '101' }, 'limit must be a whole number from 1 to 100'],
      [{ limit: 'ten' }, 'limit must be a whole number from 1 to 100'],
      [{ cursor: '0' }, 'cursor must be a whole number from 1 to 2147483647'],
      [{ cursor: '1e3' }, 'cursor must be a whole number from 1 to 2147483647'],
      [{ user_id: 'bob' }, 'user_id must be a snowflake'],
      [{ junk: 'x' }, 'property junk should not exist'],
    ])('refuses the query %p', async (query, message) => {
      const res = await list(moderator, query);
      expect(res.status).toBe(400);
      expect(res.body.message).toContain(message);
    });
  });
});
