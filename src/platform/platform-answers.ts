import type {
  APIGuild,
  APIGuildMember,
  APIThreadChannel,
  APIUser,
  RESTAPIPartialCurrentUserGuild,
  RESTGetAPIGuildChannelsResult,
  RESTGetAPIGuildThreadsResult,
} from 'discord-api-types/v10';
import { isSnowflake } from 'src/common/validation/snowflake';
import { PlatformAnswerError } from 'src/platform/platform.errors';

/**
 * The platform's 200 answers, checked for what this service reads of them before anything uses
 * them. Discord's OpenAPI document allows more than its examples show (nulls, absent optional
 * fields, unknown enum values, flags and features, new fields: docs/platform.md, "Discord's own
 * contract"); everything it allows is taken, except what the service cannot use (no list where
 * one is needed, a permission that is not a number, a guild without its @everyone role), which
 * fails as the platform failing does, naming the field. Unknown fields are kept as they are.
 */

type Json = Record<string, unknown>;
type Read<T> = (route: string, body: unknown) => T;

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/** `GET /users/@me`. */
export const readUser: Read<APIUser> = (route, body) => {
  const user = object(route, body, 'the answer');
  snowflake(route, user.id, 'id');
  text(route, user.username, 'username');
  optionalText(route, user.global_name, 'global_name');
  optionalText(route, user.avatar, 'avatar');
  return user as unknown as APIUser;
};

/** `GET /users/@me/guilds`. */
export const readGuildList: Read<RESTAPIPartialCurrentUserGuild[]> = (route, body) =>
  list(route, body, 'the answer').map((item, i) => {
    const guild = namedGuild(route, item, `[${i}]`);
    if (typeof guild.owner !== 'boolean') fail(route, `[${i}].owner`, 'not a boolean');
    decimal(route, guild.permissions, `[${i}].permissions`);
    return guild as unknown as RESTAPIPartialCurrentUserGuild;
  });

/** `GET /guilds/{id}`: the guild with its roles, @everyone among them. */
export const readGuild: Read<APIGuild> = (route, body) => {
  const guild = namedGuild(route, body, '');
  snowflake(route, guild.owner_id, 'owner_id');
  const roles = list(route, guild.roles, 'roles');
  roles.forEach((item, i) => {
    const role = object(route, item, `roles[${i}]`);
    snowflake(route, role.id, `roles[${i}].id`);
    text(route, role.name, `roles[${i}].name`);
    decimal(route, role.permissions, `roles[${i}].permissions`);
    integer(route, role.position, `roles[${i}].position`);
  });
  if (!roles.some((role) => (role as Json).id === guild.id)) {
    fail(route, 'roles', 'no @everyone role (the role whose id is the guild id)');
  }
  return guild as unknown as APIGuild;
};

/** `GET /guilds/{id}/channels`. */
export const readChannels: Read<RESTGetAPIGuildChannelsResult> = (route, body) =>
  list(route, body, 'the answer').map((item, i) => {
    channel(route, item, `[${i}]`);
    return item as RESTGetAPIGuildChannelsResult[number];
  });

/**
 * `GET /guilds/{id}/threads/active`: the threads, without any whose `thread_metadata` says it is
 * archived (an archived thread is not active, whichever list it arrives in).
 */
export const readActiveThreads: Read<RESTGetAPIGuildThreadsResult> = (route, body) => {
  const answer = object(route, body, 'the answer');
  const threads = list(route, answer.threads, 'threads').filter((item, i) => {
    const thread = channel(route, item, `threads[${i}]`);
    const metadata = thread.thread_metadata;
    if (metadata === undefined || metadata === null) return true;
    const archived = object(route, metadata, `threads[${i}].thread_metadata`).archived;
    if (archived !== undefined && typeof archived !== 'boolean') {
      fail(route, `threads[${i}].thread_metadata.archived`, 'not a boolean');
    }
    return archived !== true;
  });
  return { ...answer, threads } as unknown as RESTGetAPIGuildThreadsResult;
};

/** `GET /guilds/{id}/members/{user_id}`, `GET /users/@me/guilds/{id}/member`. */
export const readMember: Read<APIGuildMember> = (route, body) => {
  const member = object(route, body, 'the answer');
  snowflake(route, object(route, member.user, 'user').id, 'user.id');
  list(route, member.roles, 'roles').forEach((id, i) => snowflake(route, id, `roles[${i}]`));
  optionalText(route, member.communication_disabled_until, 'communication_disabled_until');
  return member as unknown as APIGuildMember;
};

/** A guild's id, name and icon (`at` the guild's place in the answer, '' for the answer itself). */
function namedGuild(route: string, value: unknown, at: string): Json {
  const guild = object(route, value, at || 'the answer');
  const field = (name: string): string => (at ? `${at}.${name}` : name);
  snowflake(route, guild.id, field('id'));
  text(route, guild.name, field('name'));
  optionalText(route, guild.icon, field('icon'));
  return guild;
}

/** A channel or thread: what the permission algorithm and the guild info read. */
function channel(route: string, value: unknown, at: string): Json & Partial<APIThreadChannel> {
  const item = object(route, value, at);
  snowflake(route, item.id, `${at}.id`);
  integer(route, item.type, `${at}.type`);
  optionalText(route, item.name, `${at}.name`);
  if (item.position !== undefined) integer(route, item.position, `${at}.position`);
  if (item.parent_id !== undefined && item.parent_id !== null) {
    snowflake(route, item.parent_id, `${at}.parent_id`);
  }
  if (item.permission_overwrites !== undefined) {
    list(route, item.permission_overwrites, `${at}.permission_overwrites`).forEach((entry, j) => {
      const where = `${at}.permission_overwrites[${j}]`;
      const overwrite = object(route, entry, where);
      snowflake(route, overwrite.id, `${where}.id`);
      integer(route, overwrite.type, `${where}.type`);
      decimal(route, overwrite.allow, `${where}.allow`);
      decimal(route, overwrite.deny, `${where}.deny`);
    });
  }
  return item;
}

function fail(route: string, field: string, problem: string): never {
  throw new PlatformAnswerError(route, field, problem);
}

function object(route: string, value: unknown, at: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(route, at, value === null ? 'null, not an object' : 'not an object');
  }
  return value as Json;
}

function list(route: string, value: unknown, at: string): unknown[] {
  if (!Array.isArray(value)) fail(route, at, value === null ? 'null, not a list' : 'not a list');
  return value;
}

function snowflake(route: string, value: unknown, at: string): void {
  if (!isSnowflake(value)) fail(route, at, 'not an id (a decimal 64-bit integer)');
}

function decimal(route: string, value: unknown, at: string): void {
  if (typeof value !== 'string' || !DECIMAL.test(value)) {
    fail(route, at, 'not a permission bitfield (a decimal integer as a string)');
  }
}

function integer(route: string, value: unknown, at: string): void {
  if (!Number.isSafeInteger(value)) fail(route, at, 'not an integer');
}

function text(route: string, value: unknown, at: string): void {
  if (typeof value !== 'string') fail(route, at, 'not a string');
}

/** A string, null, or absent. */
function optionalText(route: string, value: unknown, at: string): void {
  if (value !== undefined && value !== null && typeof value !== 'string') {
    fail(route, at, 'not a string or null');
  }
}
