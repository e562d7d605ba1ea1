import type {
  APIGuild,
  APIGuildMember,
  APIRole,
  APIThreadChannel,
  RESTGetAPIGuildChannelsResult,
} from 'discord-api-types/v10';
import { displayOrder } from 'src/guilds/channel-order';
import { basePermissions, channelPermissions, isThread } from 'src/guilds/platform-permissions';
import {
  canActOn,
  canAssignRole,
  highestRole,
  type HierarchyCheck,
} from 'src/guilds/role-hierarchy';

export type GuildChannel = RESTGetAPIGuildChannelsResult[number] | APIThreadChannel;

/**
 * One member of a guild as seen at one instant: guild-level permissions, highest role, per-channel
 * permissions and the hierarchy checks, all from the platform's algorithm.
 */
export class MemberAccess {
  readonly basePermissions: bigint;
  readonly highestRole: APIRole;
  private readonly perChannel = new Map<string, bigint>();

  constructor(
    private readonly context: GuildContext,
    readonly member: APIGuildMember,
  ) {
    this.basePermissions = basePermissions(context.guild, member);
    this.highestRole = highestRole(context.guild, member.roles);
  }

  get userId(): string {
    return this.member.user.id;
  }

  /** Effective permissions in a channel of the guild (threads through their parent). */
  permissionsIn(channel: GuildChannel): bigint {
    let permissions = this.perChannel.get(channel.id);
    if (permissions === undefined) {
      permissions = channelPermissions(this.context.guild, this.member, channel, {
        parent: this.context.parentOf(channel),
        now: this.context.now,
      }).effective;
      this.perChannel.set(channel.id, permissions);
    }
    return permissions;
  }

  canActOn(target: MemberAccess): HierarchyCheck {
    return canActOn(this.context.guild, this.member, target.member);
  }

  canAssignRole(role: APIRole): HierarchyCheck {
    return canAssignRole(this.context.guild, this.member, role);
  }
}

/** A guild the bot is in: its data, its channels in display order and the bot's member. */
export class GuildContext {
  readonly bot: MemberAccess;
  /** Channels in display order; threads whose parent is not visible are left out. */
  readonly channels: readonly GuildChannel[];
  private readonly byId: ReadonlyMap<string, GuildChannel>;
  private readonly members = new WeakMap<APIGuildMember, MemberAccess>();

  constructor(
    readonly guild: APIGuild,
    channels: readonly GuildChannel[],
    botMember: APIGuildMember,
    readonly now: Date,
  ) {
    const ids = new Set(channels.filter((c) => !isThread(c)).map((c) => c.id));
    this.channels = displayOrder(
      channels.filter((c) => !isThread(c) || (c.parent_id && ids.has(c.parent_id))),
    );
    this.byId = new Map(this.channels.map((c) => [c.id, c]));
    this.bot = new MemberAccess(this, botMember);
  }

  channel(id: string): GuildChannel | undefined {
    return this.byId.get(id);
  }

  role(id: string): APIRole | undefined {
    return this.guild.roles.find((role) => role.id === id);
  }

  parentOf(channel: GuildChannel): GuildChannel | undefined {
    return isThread(channel) && channel.parent_id ? this.byId.get(channel.parent_id) : undefined;
  }

  /** The member's access; the same member object (a cached platform answer) gives the same one. */
  accessOf(member: APIGuildMember): MemberAccess {
    if (member.user.id === this.bot.userId) return this.bot;
    let access = this.members.get(member);
    if (!access) {
      access = new MemberAccess(this, member);
      this.members.set(member, access);
    }
    return access;
  }
}

/** A guild seen by one of its members, beside the bot. */
export interface MemberGuildAccess {
  context: GuildContext;
  user: MemberAccess;
}
