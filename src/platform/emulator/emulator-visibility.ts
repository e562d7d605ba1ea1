import { ChannelType, OverwriteType, PermissionFlagsBits as P } from 'discord-api-types/v10';
import type { SeedChannel, SeedGuild, SeedMember } from 'src/platform/emulator/emulator.seed';

/*
 * Which channels a member can view, as the emulated platform decides it (discord-domain.md §1.2–1.3).
 *
 * The service's own algorithm (src/guilds/platform-permissions.ts) cannot be imported here: guilds/
 * imports platform/, so platform/ importing guilds/ would be a loop between feature folders, which
 * .dependency-cruiser.js and scripts/module-graph.ts refuse. The emulator stands in for the
 * platform, so it keeps its own account of the rules; emulator-visibility.spec.ts checks it against
 * the shared vectors and against the service's algorithm, so the two cannot drift apart silently.
 */

const ALL_PERMISSIONS = Object.values(P).reduce((all, flag) => all | flag, 0n);
/** What a timed-out member keeps in a channel. */
const TIMED_OUT_KEEPS = P.ViewChannel | P.ReadMessageHistory;

const THREAD_TYPES: ReadonlySet<number> = new Set([
  ChannelType.AnnouncementThread,
  ChannelType.PublicThread,
  ChannelType.PrivateThread,
]);

export function isThreadType(type: number): boolean {
  return THREAD_TYPES.has(type);
}

/** The channels and threads of a guild a member can view; a thread listed here may be archived. */
export interface Visibility {
  /** Channels (not threads): those the member can view, and categories with one of those in them. */
  channels: ReadonlySet<string>;
  threads: ReadonlySet<string>;
}

/**
 * What `userId` can view of `guild` at `now`. A category counts as viewable when the member can
 * view it or one of its channels (the platform shows it then). A thread needs its parent's
 * VIEW_CHANNEL; a private thread also MANAGE_THREADS there, as the seed knows no thread members.
 */
export function visibilityOf(guild: SeedGuild, userId: string, now: number): Visibility {
  const member = guild.members.find((m) => m.user_id === userId);
  const own = new Map<string, bigint>();
  for (const channel of guild.channels) {
    if (isThreadType(channel.type)) continue;
    own.set(channel.id, permissionsIn(guild, userId, member, channel, now));
  }
  const channels = new Set<string>();
  for (const channel of guild.channels) {
    if (isThreadType(channel.type) || !canView(own.get(channel.id))) continue;
    channels.add(channel.id);
    const parent = channel.parent_id
      ? guild.channels.find((c) => c.id === channel.parent_id)
      : null;
    if (parent?.type === ChannelType.GuildCategory) channels.add(parent.id);
  }
  const threads = new Set<string>();
  for (const thread of guild.channels) {
    if (!isThreadType(thread.type) || !thread.parent_id) continue;
    const inParent = own.get(thread.parent_id);
    if (!canView(inParent)) continue;
    const privateThread = thread.type === ChannelType.PrivateThread;
    if (privateThread && !hasAll(inParent ?? 0n, P.ManageThreads)) continue;
    threads.add(thread.id);
  }
  return { channels, threads };
}

/**
 * A member's permissions in a channel (not a thread): owner, base, administrator, @everyone's
 * overwrite, the roles' overwrites together, the member's own, then the timeout. Someone who is
 * not a member holds nothing. The implicit rules are left out: only VIEW_CHANNEL and
 * MANAGE_THREADS are read from the result, and the rules never add either.
 */
export function permissionsIn(
  guild: SeedGuild,
  userId: string,
  member: SeedMember | undefined,
  channel: Pick<SeedChannel, 'permission_overwrites'>,
  now: number,
): bigint {
  if (userId === guild.owner_id) return ALL_PERMISSIONS;
  if (!member) return 0n;
  const held = new Set(member.roles);
  let permissions = 0n;
  for (const role of guild.roles) {
    if (role.id === guild.id || held.has(role.id)) permissions |= BigInt(role.permissions);
  }
  if (hasAll(permissions, P.Administrator)) return ALL_PERMISSIONS;

  const overwrites = channel.permission_overwrites ?? [];
  const everyone = overwrites.find((o) => o.type === OverwriteType.Role && o.id === guild.id);
  if (everyone) permissions = (permissions & ~BigInt(everyone.deny)) | BigInt(everyone.allow);
  let allow = 0n;
  let deny = 0n;
  for (const o of overwrites) {
    if (o.type !== OverwriteType.Role || o.id === guild.id || !held.has(o.id)) continue;
    allow |= BigInt(o.allow);
    deny |= BigInt(o.deny);
  }
  permissions = (permissions & ~deny) | allow;
  const own = overwrites.find((o) => o.type === OverwriteType.Member && o.id === userId);
  if (own) permissions = (permissions & ~BigInt(own.deny)) | BigInt(own.allow);

  const until = member.communication_disabled_until
    ? Date.parse(member.communication_disabled_until)
    : NaN;
  if (until > now) permissions &= TIMED_OUT_KEEPS;
  return permissions;
}

function canView(permissions: bigint | undefined): boolean {
  return permissions !== undefined && hasAll(permissions, P.ViewChannel);
}

function hasAll(permissions: bigint, flags: bigint): boolean {
  return (permissions & flags) === flags;
}
