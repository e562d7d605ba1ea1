import type { APIGuild, APIGuildMember, APIRole } from 'discord-api-types/v10';
import { GuildContext } from 'src/guilds/guild-context';
import { assignableRole } from 'src/settings/schema/guild-checks';

const GUILD_ID = '100';
const BOT_ID = '900';

function role(id: string, name: string, position: number, extra: Partial<APIRole> = {}): APIRole {
  return { id, name, position, permissions: '0', managed: false, ...extra } as APIRole;
}

const ROLES = {
  everyone: role(GUILD_ID, '@everyone', 0),
  member: role('101', 'Member', 1),
  booster: role('102', 'Server Booster', 2, { managed: true }),
  bot: role('103', 'Bot', 5),
  // Same position as the bot's role, but younger (a larger id): ranks below it.
  helper: role('104', 'Helper', 5),
  moderator: role('105', 'Moderator', 8),
};

function guildWith(options: { botRoles: string[]; ownerId?: string }): GuildContext {
  const guild = {
    id: GUILD_ID,
    owner_id: options.ownerId ?? '1',
    roles: Object.values(ROLES),
  } as APIGuild;
  const bot = { user: { id: BOT_ID }, roles: options.botRoles } as APIGuildMember;
  return new GuildContext(guild, [], bot, new Date(0));
}

describe('assignableRole', () => {
  it.each<[string, APIRole, { botRoles: string[]; ownerId?: string }, string | null]>([
    ['a role below the bot’s highest', ROLES.member, { botRoles: [ROLES.bot.id] }, null],
    [
      'a role at the same position, younger than the bot’s',
      ROLES.helper,
      { botRoles: [ROLES.bot.id] },
      null,
    ],
    [
      '@everyone',
      ROLES.everyone,
      { botRoles: [ROLES.bot.id] },
      '100 is @everyone, which every member holds; a role the bot can give is needed',
    ],
    [
      'a managed role, even below the bot’s',
      ROLES.booster,
      { botRoles: [ROLES.bot.id] },
      "Server Booster (102) is managed by an integration (a bot's role or the booster role), so the bot cannot give it; choose a role members can be given",
    ],
    [
      'the bot’s own highest role',
      ROLES.bot,
      { botRoles: [ROLES.bot.id] },
      "Bot (103) is not below the bot's highest role, Bot (103); move the bot's role above it (Server Settings, Roles) or choose a lower role",
    ],
    [
      'a role above the bot’s highest',
      ROLES.moderator,
      { botRoles: [ROLES.bot.id, ROLES.member.id] },
      "Moderator (105) is not below the bot's highest role, Bot (103); move the bot's role above it (Server Settings, Roles) or choose a lower role",
    ],
    [
      'any role when the bot holds none (its highest is @everyone)',
      ROLES.member,
      { botRoles: [] },
      "Member (101) is not below the bot's highest role, @everyone (100); move the bot's role above it (Server Settings, Roles) or choose a lower role",
    ],
    [
      'a role above the bot’s when the bot owns the guild',
      ROLES.moderator,
      { botRoles: [], ownerId: BOT_ID },
      null,
    ],
  ])('%s', (_name, target, options, problem) => {
    expect(assignableRole.problem(target, guildWith(options))).toBe(problem);
  });
});
