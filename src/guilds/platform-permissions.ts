import { ChannelType, OverwriteType, PermissionFlagsBits } from 'discord-api-types/v10';

/**
 * The platform's permission algorithm (discord-domain.md §1.4) as pure functions. Bitfields and ids
 * are BigInt and decimal strings throughout: bits 31 and above do not survive `Number` bitwise
 * operators, and ids exceed 2^53.
 */

export interface RoleLike {
  id: string;
  permissions: string;
  position: number;
}

export interface GuildLike {
  id: string;
  owner_id: string;
  roles: readonly RoleLike[];
}

export interface OverwriteLike {
  id: string;
  type: number;
  allow: string;
  deny: string;
}

export interface ChannelLike {
  id: string;
  type: number;
  parent_id?: string | null;
  permission_overwrites?: readonly OverwriteLike[];
}

export interface MemberLike {
  user: { id: string };
  roles: readonly string[];
  /** ISO 8601; a time after now means the member is timed out. */
  communication_disabled_until?: string | null;
}

/** Every permission the platform defines (bit 47 is unused): what the owner and admins hold. */
export const ALL_PERMISSIONS: bigint = Object.values(PermissionFlagsBits).reduce(
  (all, flag) => all | flag,
  0n,
);

const P = PermissionFlagsBits;
const ROLE_OVERWRITE: number = OverwriteType.Role;
const MEMBER_OVERWRITE: number = OverwriteType.Member;
/** What a timed-out member keeps in a channel. */
const TIMED_OUT_KEEPS = P.ViewChannel | P.ReadMessageHistory;
/** Removed when the member cannot send in a channel where sending is what they would do. */
const NEEDS_SEND = P.SendTTSMessages | P.MentionEveryone | P.AttachFiles | P.EmbedLinks;

const THREAD_TYPES: ReadonlySet<number> = new Set([
  ChannelType.AnnouncementThread,
  ChannelType.PublicThread,
  ChannelType.PrivateThread,
]);
/** Channel types whose implicit SEND rule keys on SEND_MESSAGES. */
const MESSAGE_CHANNEL_TYPES: ReadonlySet<number> = new Set([
  ChannelType.GuildText,
  ChannelType.GuildVoice,
  ChannelType.GuildAnnouncement,
  ChannelType.GuildStageVoice,
]);

export function isThread(channel: Pick<ChannelLike, 'type'>): boolean {
  return THREAD_TYPES.has(channel.type);
}

export function hasPermission(permissions: bigint, flag: bigint): boolean {
  return (permissions & flag) === flag;
}

/** The flags of `required` that `permissions` lacks (administrators lack none). */
export function missingPermissions(permissions: bigint, required: bigint): bigint {
  if (hasPermission(permissions, P.Administrator)) return 0n;
  return required & ~permissions;
}

/**
 * Guild-level permissions (steps 1–3): the owner and administrators hold everything; otherwise
 * @everyone's permissions and those of every role the member holds. Role ids the guild does not
 * know are ignored.
 */
export function basePermissions(guild: GuildLike, member: MemberLike): bigint {
  if (member.user.id === guild.owner_id) return ALL_PERMISSIONS;
  const held = new Set(member.roles);
  let permissions = 0n;
  for (const role of guild.roles) {
    if (role.id === guild.id || held.has(role.id)) permissions |= BigInt(role.permissions);
  }
  return hasPermission(permissions, P.Administrator) ? ALL_PERMISSIONS : permissions;
}

export interface ChannelPermissions {
  /** After the overwrites (steps 1–6): what discord.js `permissionsFor` answers. */
  overwritesOnly: bigint;
  /** After the timeout and implicit rules as well: what the member can actually do. */
  effective: bigint;
}

/**
 * The member's permissions in a channel. A thread is computed from its parent's overwrites, so
 * `parent` must be given for threads; a category child uses only its own overwrites.
 */
export function channelPermissions(
  guild: GuildLike,
  member: MemberLike,
  channel: ChannelLike,
  options: { parent?: ChannelLike; now: Date },
): ChannelPermissions {
  const base = basePermissions(guild, member);
  // Only the owner and administrators reach ALL (it includes ADMINISTRATOR): overwrites, timeouts
  // and implicit rules do not apply to them.
  if (base === ALL_PERMISSIONS) return { overwritesOnly: base, effective: base };
  const source = isThread(channel) ? options.parent : channel;
  if (!source) throw new Error(`thread ${channel.id} needs its parent channel`);
  const overwritesOnly = applyOverwrites(base, guild, member, source.permission_overwrites ?? []);
  return {
    overwritesOnly,
    effective: applyImplicitRules(overwritesOnly, member, channel, options.now),
  };
}

/** Steps 4–6: @everyone's overwrite, the member's roles' overwrites together, the member's own. */
function applyOverwrites(
  base: bigint,
  guild: GuildLike,
  member: MemberLike,
  overwrites: readonly OverwriteLike[],
): bigint {
  let permissions = base;
  const everyone = overwrites.find((o) => o.type === ROLE_OVERWRITE && o.id === guild.id);
  if (everyone) permissions = (permissions & ~BigInt(everyone.deny)) | BigInt(everyone.allow);

  const held = new Set(member.roles);
  let allow = 0n;
  let deny = 0n;
  for (const overwrite of overwrites) {
    if (overwrite.type !== ROLE_OVERWRITE || overwrite.id === guild.id) continue;
    if (!held.has(overwrite.id)) continue;
    allow |= BigInt(overwrite.allow);
    deny |= BigInt(overwrite.deny);
  }
  permissions = (permissions & ~deny) | allow;

  const own = overwrites.find((o) => o.type === MEMBER_OVERWRITE && o.id === member.user.id);
  if (own) permissions = (permissions & ~BigInt(own.deny)) | BigInt(own.allow);
  return permissions;
}

/** Steps 7–9: timeout, no VIEW_CHANNEL means nothing, no send means no send-dependent extras. */
function applyImplicitRules(
  permissions: bigint,
  member: MemberLike,
  channel: ChannelLike,
  now: Date,
): bigint {
  let result = permissions;
  if (isTimedOut(member, now)) result &= TIMED_OUT_KEEPS;
  if (!hasPermission(result, P.ViewChannel)) return 0n;
  const sendFlag = isThread(channel)
    ? P.SendMessagesInThreads
    : MESSAGE_CHANNEL_TYPES.has(channel.type)
      ? P.SendMessages
      : null;
  if (sendFlag !== null && !hasPermission(result, sendFlag)) result &= ~NEEDS_SEND;
  return result;
}

export function isTimedOut(member: MemberLike, now: Date): boolean {
  const until = member.communication_disabled_until;
  if (!until) return false;
  const time = Date.parse(until);
  return Number.isFinite(time) && time > now.getTime();
}

/** The names of the flags set in `permissions` (unknown bits are left out). */
export function permissionNames(permissions: bigint): string[] {
  return Object.entries(PermissionFlagsBits)
    .filter(
      ([name, flag]) => name !== 'ManageEmojisAndStickers' && hasPermission(permissions, flag),
    )
    .map(([name]) => name);
}
