import { PermissionFlagsBits as P } from 'discord-api-types/v10';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { emulatorOf, loginAs, type TestLogin } from 'test/support/auth';
import { useTestApp, type TestApp } from 'test/support/test-app';
import { faultsOf } from 'test/support/emulator-faults';

/** The demo community's ids (src/platform/emulator/demo.seed.ts). */
const COMMUNITY = DEMO_IDS.community;
const id = (n: number): string => `11000000000000001${String(n).padStart(2, '0')}`;
const CHANNEL = {
  information: id(20),
  rules: id(21),
  announcements: id(22),
  community: id(23),
  general: id(24),
  offTopic: id(25),
  welcomeThread: id(26),
  helpForum: id(27),
  voice: id(28),
  lounge: id(29),
  townHall: id(30),
  staff: id(31),
  modLog: id(32),
  staffChat: id(33),
  noBots: id(34),
};
const ALL = '8866461766385663';

/** @everyone's permissions in the demo community, and the moderator role's. */
const EVERYONE =
  P.CreateInstantInvite |
  P.ChangeNickname |
  P.ViewChannel |
  P.SendMessages |
  P.EmbedLinks |
  P.AttachFiles |
  P.AddReactions |
  P.UseExternalEmojis |
  P.ReadMessageHistory |
  P.Connect |
  P.Speak |
  P.UseVAD |
  P.UseApplicationCommands |
  P.CreatePublicThreads |
  P.SendMessagesInThreads;
const MODERATOR =
  P.KickMembers |
  P.BanMembers |
  P.ModerateMembers |
  P.ManageMessages |
  P.ManageNicknames |
  P.ManageThreads |
  P.ViewAuditLog |
  P.MuteMembers |
  P.MoveMembers;

interface ChannelEntry {
  user: string;
  bot: string;
  channel: { id: string; name: string; parent_id: string | null; position: number; type: number };
}

function entry(body: { channels: ChannelEntry[] }, channelId: string): ChannelEntry {
  const found = body.channels.find((c) => c.channel.id === channelId);
  if (!found) throw new Error(`channel ${channelId} is not in the answer`);
  return found;
}

const has = (permissions: string, flag: bigint): boolean => (BigInt(permissions) & flag) === flag;

interface GuildInfoBody {
  name: string;
  icon: string | null;
  owner_id: string;
  roles: { id: string; name: string; permissions: string; position: number }[];
  user_roles: string[];
  bot_roles: string[];
  channels: ChannelEntry[];
  message?: string;
  code?: string;
}

async function guildInfo(
  t: TestApp,
  login: TestLogin,
  guildId: string,
  status = 200,
): Promise<GuildInfoBody> {
  const res = await t
    .http()
    .get(`/users/@me/guilds/${guildId}`)
    .set('Authorization', `Bearer ${login.token}`)
    .expect(status);
  return res.body as GuildInfoBody;
}

// The same answers whether the guild comes from the bot's guild state (the demo bot reports it)
// or from the platform: docs/guild-state.md.
describe.each([
  ["from the bot's guild state", {}],
  ['from the platform', { GUILD_STATE_FEED: 'false' }],
])('GET /users/@me/guilds/{guild_id} %s', (_path, env: Record<string, string>) => {
  const t = useTestApp({ env });

  it("answers a member's view of the guild in the documented shape", async () => {
    const login = await loginAs(t(), DEMO_IDS.demoUser);
    const body = await guildInfo(t(), login, COMMUNITY);
    expect(Object.keys(body).sort()).toEqual(
      ['bot_roles', 'channels', 'icon', 'name', 'owner_id', 'roles', 'user_roles'].sort(),
    );
    expect(body.name).toBe('Demo Community');
    expect(body.owner_id).toBe(DEMO_IDS.alice);
    expect(body.icon).toBe(
      `https://cdn.discordapp.com/icons/${COMMUNITY}/a_9c1f0e3b2d4a5c6e7f8091a2b3c4d5e6.gif`,
    );
    expect(body.user_roles.sort()).toEqual([id(3), id(6), id(8), id(9)].sort());
    expect(body.bot_roles).toEqual([id(2)]);
    expect(body.roles[0]).toEqual({
      id: id(1),
      name: 'Administrator',
      permissions: P.Administrator.toString(),
      position: 11,
    });
    // From the highest role down; Muted and Newcomer share a position and the older id ranks higher.
    expect(body.roles.map((r) => r.id)).toEqual([
      ...[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map(id),
      COMMUNITY,
    ]);
    // A channel without overwrites that concern the user: exactly the guild-level permissions.
    expect(entry(body, CHANNEL.general).user).toBe((EVERYONE | MODERATOR).toString());
    for (const channel of body.channels) {
      expect(channel.user).toMatch(/^\d+$/);
      expect(channel.bot).toMatch(/^\d+$/);
    }
  });

  it('lists channels and threads in the display order of the platform', async () => {
    const body = await guildInfo(t(), await loginAs(t(), DEMO_IDS.demoUser), COMMUNITY);
    expect(body.channels.map((c) => c.channel.id)).toEqual([
      CHANNEL.information,
      CHANNEL.rules,
      CHANNEL.announcements,
      CHANNEL.community,
      CHANNEL.general,
      CHANNEL.welcomeThread,
      CHANNEL.offTopic,
      CHANNEL.helpForum,
      CHANNEL.voice,
      CHANNEL.lounge,
      CHANNEL.townHall,
      CHANNEL.staff,
      CHANNEL.modLog,
    ]);
    expect(entry(body, CHANNEL.rules).channel).toEqual({
      id: CHANNEL.rules,
      name: 'rules',
      parent_id: CHANNEL.information,
      position: 0,
      type: 0,
    });
  });

  it('applies role and member overwrites and the implicit send rule', async () => {
    const body = await guildInfo(t(), await loginAs(t(), DEMO_IDS.demoUser), COMMUNITY);
    // rules: @everyone may not send or react; the moderator role may send again.
    const rules = entry(body, CHANNEL.rules).user;
    expect(has(rules, P.SendMessages)).toBe(true);
    expect(has(rules, P.AddReactions)).toBe(false);
  });

  it('leaves out the channels the bot cannot view: the platform hides them from the bot', async () => {
    const body = await guildInfo(t(), await loginAs(t(), DEMO_IDS.demoUser), COMMUNITY);
    const ids = body.channels.map((c) => c.channel.id);
    // staff-chat (moderators only) and no-bots (denies the bot's role) exist, and the demo user
    // may view staff-chat; the bot is told nothing about either.
    expect(ids).not.toContain(CHANNEL.staffChat);
    expect(ids).not.toContain(CHANNEL.noBots);
    // A category the bot cannot view is listed while it holds a channel the bot can.
    expect(entry(body, CHANNEL.staff).bot).toBe('0');
    expect(ids).toContain(CHANNEL.modLog);
  });

  it("computes the bot's own permissions, its member overwrite included", async () => {
    const body = await guildInfo(t(), await loginAs(t(), DEMO_IDS.demoUser), COMMUNITY);
    // mod-log hides the channel from @everyone but lets the bot in by a member overwrite.
    const modLog = entry(body, CHANNEL.modLog).bot;
    for (const flag of [P.ViewChannel, P.SendMessages, P.EmbedLinks]) {
      expect(has(modLog, flag)).toBe(true);
    }
  });

  it("computes a category's children from their own overwrites, not the category's", async () => {
    const body = await guildInfo(t(), await loginAs(t(), DEMO_IDS.demoUser), COMMUNITY);
    // The Information category denies @everyone sending; its child "rules" allows moderators.
    expect(has(entry(body, CHANNEL.information).user, P.SendMessages)).toBe(false);
    expect(has(entry(body, CHANNEL.rules).user, P.SendMessages)).toBe(true);
  });

  it("gives a thread its parent channel's permissions", async () => {
    const body = await guildInfo(t(), await loginAs(t(), DEMO_IDS.bob), COMMUNITY);
    const thread = entry(body, CHANNEL.welcomeThread);
    expect(thread.channel).toEqual({
      id: CHANNEL.welcomeThread,
      name: 'welcome-thread',
      parent_id: CHANNEL.general,
      position: 0,
      type: 11,
    });
    const carol = await guildInfo(t(), await loginAs(t(), DEMO_IDS.carol), COMMUNITY);
    const parent = entry(carol, CHANNEL.general);
    expect(entry(carol, CHANNEL.welcomeThread).user).toBe(parent.user);
    expect(entry(carol, CHANNEL.welcomeThread).bot).toBe(parent.bot);
  });

  it('leaves a timed-out member only viewing and reading history', async () => {
    const body = await guildInfo(t(), await loginAs(t(), DEMO_IDS.bob), COMMUNITY);
    const readOnly = (P.ViewChannel | P.ReadMessageHistory).toString();
    expect(entry(body, CHANNEL.general).user).toBe(readOnly);
    expect(entry(body, CHANNEL.welcomeThread).user).toBe(readOnly);
    // Hidden channels stay hidden.
    expect(entry(body, CHANNEL.staff).user).toBe('0');
  });

  it('gives the owner every permission in every channel', async () => {
    const body = await guildInfo(t(), await loginAs(t(), DEMO_IDS.alice), COMMUNITY);
    expect(new Set(body.channels.map((c) => c.user))).toEqual(new Set([ALL]));
  });

  it('serves a static icon as PNG', async () => {
    const body = await guildInfo(t(), await loginAs(t(), DEMO_IDS.carol), DEMO_IDS.botLab);
    expect(body.icon).toBe(
      `https://cdn.discordapp.com/icons/${DEMO_IDS.botLab}/0123456789abcdef0123456789abcdef.png`,
    );
  });

  it('answers 404 when the user is not a member', async () => {
    const body = await guildInfo(t(), await loginAs(t(), DEMO_IDS.demoUser), DEMO_IDS.botLab, 404);
    expect(body).toEqual({ message: 'You are not a member of this guild', code: 'NotFound' });
  });

  it('answers 404 when the bot is not in the guild, even for its owner', async () => {
    const body = await guildInfo(t(), await loginAs(t(), DEMO_IDS.demoUser), DEMO_IDS.sandbox, 404);
    expect(body).toEqual({ message: 'The bot is not in this guild', code: 'NotFound' });
  });

  it('answers 404 for a guild that does not exist', async () => {
    const body = await guildInfo(t(), await loginAs(t(), DEMO_IDS.demoUser), '1234567890', 404);
    expect(body).toEqual({ message: 'The bot is not in this guild', code: 'NotFound' });
  });

  it.each([
    'abc',
    '-1',
    '1.5',
    '0123',
    '1e18',
    '18446744073709551616',
    '123456789012345678901',
    '%20123',
    '12%0A',
  ])('answers 400 for the guild id %j', async (guildId) => {
    const body = await guildInfo(t(), await loginAs(t(), DEMO_IDS.demoUser), guildId, 400);
    expect(body).toMatchObject({
      code: 'BadRequest',
      message: 'guild_id must be a snowflake (a decimal id of at most 20 digits)',
    });
  });

  it('serves API tokens as well as login sessions, and nobody without a token', async () => {
    const login = await loginAs(t(), DEMO_IDS.demoUser);
    const api = await t()
      .http()
      .post('/sessions')
      .set('Authorization', `Bearer ${login.token}`)
      .send({ name: 'script', type: 'api', expiry: 600 })
      .expect(201);
    const res = await t()
      .http()
      .get(`/users/@me/guilds/${COMMUNITY}`)
      .set('Authorization', api.body.token as string)
      .expect(200);
    expect(res.body.name).toBe('Demo Community');
    const anonymous = await t().http().get(`/users/@me/guilds/${COMMUNITY}`).expect(401);
    expect(anonymous.body.code).toBe('NoAuthToken');
  });
});

describe('GET /users/@me/guilds/{guild_id}: platform calls, without guild state', () => {
  const t = useTestApp({ env: { GUILD_STATE_FEED: 'false' } });

  it('makes one platform call per resource for ten concurrent requests', async () => {
    const login = await loginAs(t(), DEMO_IDS.carol);
    const emulator = emulatorOf(t());
    const routes = [
      'GET /guilds/:guild_id',
      'GET /guilds/:guild_id/channels',
      'GET /guilds/:guild_id/threads/active',
      'GET /guilds/:guild_id/members/:user_id',
      'GET /users/@me/guilds/:guild_id/member',
    ];
    const before = routes.map((route) => emulator.countRequests(route));
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        t()
          .http()
          .get(`/users/@me/guilds/${COMMUNITY}`)
          .set('Authorization', `Bearer ${login.token}`),
      ),
    );
    expect(answers.map((res) => res.status)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((res) => JSON.stringify(res.body))).size).toBe(1);
    const calls = routes.map((route, i) => emulator.countRequests(route) - before[i]);
    // The bot's member with the bot's token; the user's with the user's own (the demo login
    // grants guilds.members.read).
    expect(calls).toEqual([1, 1, 1, 1, 1]);
  });

  it('answers 500 InternalError without the platform body when the platform fails', async () => {
    const login = await loginAs(t(), DEMO_IDS.demoUser);
    const secret = 'stack trace of the platform: db-17.internal';
    // More failures than the client retries.
    faultsOf(emulatorOf(t())).inject(
      'GET /guilds/:guild_id/channels',
      { kind: 'respond', status: 500, body: { message: secret } },
      10,
    );
    const res = await t()
      .http()
      .get(`/users/@me/guilds/${DEMO_IDS.botLab}`)
      .set('Authorization', `Bearer ${login.token}`)
      .expect(500);
    faultsOf(emulatorOf(t())).clear();
    expect(res.body).toEqual({
      message: 'The chat platform is unavailable; try again later',
      code: 'InternalError',
      error_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(res.text).not.toContain('db-17');
    // The error id leads to the log line that says what failed.
    const line = t().logs.lines.find((l) => l.error_id === res.body.error_id);
    expect(JSON.stringify(line)).toContain('/guilds/:guild_id/channels');
  });
});
