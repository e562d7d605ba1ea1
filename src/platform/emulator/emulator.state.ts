import {
  OverwriteType,
  PermissionFlagsBits,
  type APIApplicationCommand,
  type APIGuildMember,
  type APIUser,
  type RESTAPIPartialCurrentUserGuild,
  type RESTPutAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import type { GuildState, GuildStateFields } from 'clients/bot-reporter/src/guild-state';
import type {
  EmulatorSeed,
  SeedChannel,
  SeedGuild,
  SeedMember,
  SeedRole,
} from 'src/platform/emulator/emulator.seed';
import {
  consequences,
  gatewayState,
  stateFields,
  stateMember,
  stateRole,
  stateThread,
  type GuildStateChange,
  type GuildStateEvent,
} from 'src/platform/emulator/emulator-gateway-view';
import {
  EmulatorOAuth2,
  type CodeChallenge,
  type CodeRefusal,
  type Grant,
} from 'src/platform/emulator/emulator-oauth2';
import {
  channelObject,
  currentUserObject,
  memberObject,
  threadObject,
} from 'src/platform/emulator/emulator-shapes';
import {
  isThreadType,
  visibilityOf,
  type Visibility,
} from 'src/platform/emulator/emulator-visibility';
import { compareSnowflakes } from 'src/common/validation/snowflake';

export type { GuildStateChange } from 'src/platform/emulator/emulator-gateway-view';

/** Every permission bit the platform defines: what an owner or an administrator holds. */
const ALL_PERMISSIONS = Object.values(PermissionFlagsBits).reduce((all, bit) => all | bit, 0n);
/** The scopes of a code issued without naming any, unless the seed says otherwise. */
const DEFAULT_LOGIN_SCOPES = ['identify', 'guilds'];

/** The bot joined (`present`) or left a guild: what the platform's gateway would tell the bot. */
export interface BotMembershipChange {
  guildId: string;
  present: boolean;
}

/**
 * The emulated platform's data: the seed plus what happens at run time (guilds changing as the bot's
 * gateway would announce it, codes and tokens, commands).
 */
export class EmulatorState {
  private readonly users = new Map<string, APIUser>();
  private readonly guilds = new Map<string, SeedGuild>();
  /**
   * The guilds each user is a member of, by id: `GET /users/@me/guilds` reads a user's own, where a
   * scan of every guild would cost a large world's (100,000 guilds in `bench:fleet`) on each call.
   * Kept by every change of members here (`addMember`, `removeMember`, `addGuild`).
   */
  private readonly guildsByMember = new Map<string, Set<string>>();
  private commands: APIApplicationCommand[] = [];
  private nextId = 1_200_000_000_000_000_000n;
  /** Authorization codes and the grants issued for them. */
  private readonly oauth2: EmulatorOAuth2;
  private readonly botMembershipListeners = new Set<(change: BotMembershipChange) => void>();
  private readonly guildStateListeners = new Set<(change: GuildStateChange) => void>();

  constructor(
    readonly seed: EmulatorSeed,
    private readonly now: () => number = Date.now,
  ) {
    for (const user of seed.users) this.users.set(user.id, user);
    for (const guild of seed.guilds) {
      this.guilds.set(guild.id, guild);
      this.indexMembers(guild);
    }
    this.oauth2 = new EmulatorOAuth2(
      (userId) => this.users.has(userId),
      now,
      seed.authorization_codes ?? [],
    );
    if (seed.commands) this.replaceCommands(seed.commands);
  }

  get botUserId(): string {
    return this.seed.application.id;
  }

  /** The scopes of a code issued without naming any. */
  get loginScopes(): string[] {
    return this.seed.login_scopes ?? DEFAULT_LOGIN_SCOPES;
  }

  user(id: string): APIUser | undefined {
    return this.users.get(id);
  }

  guild(id: string): SeedGuild | undefined {
    return this.guilds.get(id);
  }

  member(guild: SeedGuild, userId: string): SeedMember | undefined {
    return guild.members.find((member) => member.user_id === userId);
  }

  private memberships(userId: string): Set<string> {
    let guilds = this.guildsByMember.get(userId);
    if (!guilds) {
      guilds = new Set();
      this.guildsByMember.set(userId, guilds);
    }
    return guilds;
  }

  private indexMembers(guild: SeedGuild): void {
    for (const member of guild.members) this.memberships(member.user_id).add(guild.id);
  }

  /**
   * Run-time change (tests, demo): `userId` joins the guild, or, already a member, changes (roles,
   * timeout). The bot joins with its own id: `guild_create` with the guild as its gateway holds it;
   * a change to the bot's own member is a `bot_member_update`.
   */
  addMember(guildId: string, member: SeedMember): void {
    const guild = this.requireGuild(guildId);
    const isBot = member.user_id === this.botUserId;
    const joins = isBot && !this.member(guild, this.botUserId);
    const apply = (): void => {
      guild.members = [...guild.members.filter((m) => m.user_id !== member.user_id), member];
      this.memberships(member.user_id).add(guild.id);
    };
    if (isBot && !joins) {
      this.change(guild, apply, () => [{ type: 'bot_member_update', member: stateMember(member) }]);
      return;
    }
    // Another member's change cannot change what the bot sees: nothing to announce for it.
    apply();
    if (!joins) return;
    this.announce({ guildId, present: true });
    this.announceGuildCreate(guild);
  }

  /** Run-time change (tests, demo): `userId` leaves the guild, or the bot (`guild_delete`). */
  removeMember(guildId: string, userId: string): void {
    const guild = this.requireGuild(guildId);
    const leaves = userId === this.botUserId && !!this.member(guild, userId);
    guild.members = guild.members.filter((member) => member.user_id !== userId);
    this.guildsByMember.get(userId)?.delete(guild.id);
    if (!leaves) return;
    this.announce({ guildId, present: false });
    this.announceState(guildId, [{ type: 'guild_delete', unavailable: false }]);
  }

  /** Run-time change (tests, demo): a new guild; with the bot among its members, the bot joins. */
  addGuild(guild: SeedGuild): void {
    if (this.guilds.has(guild.id)) throw new Error(`guild ${guild.id} exists`);
    this.guilds.set(guild.id, guild);
    this.indexMembers(guild);
    if (!this.member(guild, this.botUserId)) return;
    this.announce({ guildId: guild.id, present: true });
    this.announceGuildCreate(guild);
  }

  /** Run-time change (tests, demo): the guild's name, icon or owner (`guild_update`). */
  updateGuild(guildId: string, fields: Partial<GuildStateFields>): void {
    const guild = this.requireGuild(guildId);
    this.change(
      guild,
      () => Object.assign(guild, definedOnly(fields)),
      () => [{ type: 'guild_update', guild: stateFields(guild) }],
    );
  }

  /** Run-time change (tests, demo): a role is created or changed (`role_upsert`). */
  upsertRole(guildId: string, role: SeedRole): void {
    const guild = this.requireGuild(guildId);
    this.change(
      guild,
      () => (guild.roles = replaceById(guild.roles, role)),
      () => [{ type: 'role_upsert', role: stateRole(role) }],
    );
  }

  /**
   * Run-time change (tests, demo): a role is deleted, and with it its place in members' roles and
   * in channels' overwrites, as on the platform. The gateway announces only GUILD_ROLE_DELETE for
   * those (as for member roles, clients drop the role themselves), so only `role_delete` is
   * announced, besides channels the bot gains or loses by it.
   */
  deleteRole(guildId: string, roleId: string): void {
    const guild = this.requireGuild(guildId);
    if (roleId === guildId) throw new Error('@everyone cannot be deleted');
    if (!guild.roles.some((role) => role.id === roleId)) throw new Error(`unknown role ${roleId}`);
    this.change(
      guild,
      () => {
        guild.roles = guild.roles.filter((role) => role.id !== roleId);
        guild.members = guild.members.map((member) =>
          member.roles.includes(roleId)
            ? { ...member, roles: member.roles.filter((id) => id !== roleId) }
            : member,
        );
        guild.channels = guild.channels.map((channel) => withoutRoleOverwrite(channel, roleId));
      },
      () => [{ type: 'role_delete', role_id: roleId }],
    );
  }

  /**
   * Run-time change (tests, demo): a channel or thread is created or changed. A channel is
   * announced as the bot's gateway sees it (obfuscated when the bot cannot view it); a thread only
   * when the bot can view it (an archived one too, as THREAD_UPDATE tells it).
   */
  upsertChannel(guildId: string, channel: SeedChannel): void {
    const guild = this.requireGuild(guildId);
    this.change(
      guild,
      () => (guild.channels = replaceById(guild.channels, channel)),
      (after, visibility) => {
        if (!isThreadType(channel.type)) {
          const seen = after.channels.find((c) => c.id === channel.id);
          return seen ? [{ type: 'channel_upsert', channel: seen }] : [];
        }
        return visibility.threads.has(channel.id)
          ? [{ type: 'thread_upsert', thread: stateThread(channel) }]
          : [];
      },
    );
  }

  /**
   * Run-time change (tests, demo): a channel or thread is deleted. A category's channels stay,
   * out of any category (each a `channel_upsert`); a channel's threads go with it, each announced
   * as a `thread_delete` when the bot could view it.
   */
  deleteChannel(guildId: string, channelId: string): void {
    const guild = this.requireGuild(guildId);
    const target = guild.channels.find((channel) => channel.id === channelId);
    if (!target) throw new Error(`unknown channel ${channelId}`);
    const viewedThreads = this.botVisibility(guild).threads;
    const threads = isThreadType(target.type)
      ? [target]
      : guild.channels.filter((c) => isThreadType(c.type) && c.parent_id === channelId);
    const gone = new Set([channelId, ...threads.map((thread) => thread.id)]);
    const orphans = guild.channels.filter((c) => !gone.has(c.id) && c.parent_id === channelId);
    this.change(
      guild,
      () => {
        guild.channels = guild.channels
          .filter((channel) => !gone.has(channel.id))
          .map((channel) =>
            channel.parent_id === channelId ? { ...channel, parent_id: null } : channel,
          );
      },
      (after) => [
        ...(isThreadType(target.type)
          ? []
          : [{ type: 'channel_delete' as const, channel_id: channelId }]),
        ...after.channels
          .filter((channel) => orphans.some((orphan) => orphan.id === channel.id))
          .map((channel) => ({ type: 'channel_upsert' as const, channel })),
        ...threads
          .filter((thread) => viewedThreads.has(thread.id))
          .map((thread) => ({ type: 'thread_delete' as const, thread_id: thread.id })),
      ],
    );
  }

  /** The guilds the bot is in now: what the gateway's READY would list. */
  botGuildIds(): string[] {
    return [...this.guilds.values()]
      .filter((guild) => this.member(guild, this.botUserId))
      .map((guild) => guild.id);
  }

  /**
   * Calls `listener` whenever the bot joins or leaves a guild, as the gateway tells a bot; returns
   * what stops it.
   */
  onBotMembership(listener: (change: BotMembershipChange) => void): () => void {
    this.botMembershipListeners.add(listener);
    return () => this.botMembershipListeners.delete(listener);
  }

  /**
   * The guild as the bot's gateway connection holds it now: what its GUILD_CREATE would bring
   * (channels it cannot view obfuscated, the active threads it can view, its own member).
   */
  gatewayGuildState(guildId: string): GuildState {
    const view = this.gatewayView(this.requireGuild(guildId));
    if (!view) throw new Error(`the bot is not in guild ${guildId}`);
    return view;
  }

  /**
   * Calls `listener` with each change to a guild the bot is in, as its gateway would announce it,
   * in order; returns what stops it. Whoever mirrors a guild from these matches
   * `gatewayGuildState` (and its `guildStateHash`) by also doing what the platform leaves to its
   * clients: dropping a thread once archived, the threads of a channel that turns obfuscated, and
   * a deleted role from the bot's roles and from overwrites.
   */
  onGuildState(listener: (change: GuildStateChange) => void): () => void {
    this.guildStateListeners.add(listener);
    return () => this.guildStateListeners.delete(listener);
  }

  private announce(change: BotMembershipChange): void {
    for (const listener of this.botMembershipListeners) listener(change);
  }

  private announceState(guildId: string, events: readonly GuildStateEvent[]): void {
    for (const event of events) {
      const change: GuildStateChange = { guild_id: guildId, ...event };
      for (const listener of this.guildStateListeners) listener(change);
    }
  }

  private announceGuildCreate(guild: SeedGuild): void {
    const view = this.gatewayView(guild);
    if (view) this.announceState(guild.id, [{ type: 'guild_create', guild: view }]);
  }

  /**
   * Applies a run-time change to `guild`; when the bot is in it, announces the change's own events
   * (`primary`, from the guild after it) and then what follows for what the bot can view.
   */
  private change(
    guild: SeedGuild,
    apply: () => void,
    primary: (after: GuildState, visibility: Visibility) => GuildStateEvent[],
  ): void {
    const before = this.gatewayView(guild);
    apply();
    const visibility = this.botVisibility(guild);
    const after = this.gatewayView(guild, visibility);
    if (!before || !after) return;
    const events = primary(after, visibility);
    this.announceState(guild.id, [...events, ...consequences(before, after, events)]);
  }

  /** The guild as the bot's gateway holds it; null when the bot is not in it. */
  private gatewayView(guild: SeedGuild, visibility?: Visibility): GuildState | null {
    const bot = this.member(guild, this.botUserId);
    return bot ? gatewayState(guild, bot, visibility ?? this.botVisibility(guild)) : null;
  }

  private botVisibility(guild: SeedGuild): Visibility {
    return visibilityOf(guild, this.botUserId, this.now());
  }

  private requireGuild(guildId: string): SeedGuild {
    const guild = this.guilds.get(guildId);
    if (!guild) throw new Error(`unknown guild ${guildId}`);
    return guild;
  }

  // --- OAuth2 (emulator-oauth2.ts) ---------------------------------------------------------------

  issueCode(
    userId: string,
    scopes: string[],
    redirectUri: string,
    challenge?: CodeChallenge,
  ): string {
    return this.oauth2.issueCode(userId, scopes, redirectUri, challenge);
  }

  /** Codes issued and neither exchanged nor dropped yet. */
  get pendingCodes(): number {
    return this.oauth2.pendingCodes;
  }

  redeemCode(code: string, redirectUri: string, verifier?: string): Grant | CodeRefusal {
    return this.oauth2.redeemCode(code, redirectUri, verifier);
  }

  refresh(refreshToken: string): Grant | undefined {
    return this.oauth2.refresh(refreshToken);
  }

  revoke(token: string): void {
    this.oauth2.revoke(token);
  }

  grantForAccessToken(token: string): Grant | undefined {
    return this.oauth2.grantForAccessToken(token);
  }

  // --- Shapes as the platform serves them -------------------------------------------------------

  /**
   * `GET /guilds/{id}/channels`: like the platform, without threads, and without the channels the
   * bot cannot view (change log "Channel Obfuscation for Users and Bots": omitted entirely).
   */
  channelObjects(guild: SeedGuild): Record<string, unknown>[] {
    const { channels } = this.botVisibility(guild);
    return guild.channels
      .filter((channel) => !isThreadType(channel.type) && channels.has(channel.id))
      .map((channel) => channelObject(guild.id, channel));
  }

  /** `GET /guilds/{id}/threads/active`: the active threads the bot can view. */
  threadObjects(guild: SeedGuild): Record<string, unknown>[] {
    const { threads } = this.botVisibility(guild);
    return guild.channels
      .filter((channel) => threads.has(channel.id) && !channel.archived)
      .map((channel) => threadObject(guild, channel));
  }

  /** `GET /users/@me/guilds` for a user: the guilds the user is in, by ascending id. */
  partialGuildsOf(
    userId: string,
    page: { after?: string; before?: string; limit: number },
  ): RESTAPIPartialCurrentUserGuild[] {
    return [...(this.guildsByMember.get(userId) ?? [])]
      .map((id) => this.requireGuild(id))
      .sort((a, b) => compareSnowflakes(a.id, b.id))
      .filter((guild) => !page.after || compareSnowflakes(guild.id, page.after) > 0)
      .filter((guild) => !page.before || compareSnowflakes(guild.id, page.before) < 0)
      .slice(0, page.limit)
      .map((guild) => ({
        id: guild.id,
        name: guild.name,
        icon: guild.icon,
        banner: null,
        owner: guild.owner_id === userId,
        permissions: this.guildPermissions(guild, userId).toString(),
        features: (guild.features ?? []) as RESTAPIPartialCurrentUserGuild['features'],
      }));
  }

  /** `GET /users/@me`. */
  currentUserObject(id: string): APIUser | undefined {
    const user = this.users.get(id);
    return user && currentUserObject(user);
  }

  memberObject(member: SeedMember): APIGuildMember {
    return memberObject(member, this.users.get(member.user_id));
  }

  /** Guild-level permissions, as the platform reports them in the guild list (no overwrites). */
  private guildPermissions(guild: SeedGuild, userId: string): bigint {
    if (guild.owner_id === userId) return ALL_PERMISSIONS;
    const member = this.member(guild, userId);
    const held = new Set([guild.id, ...(member?.roles ?? [])]);
    const base = guild.roles
      .filter((role) => held.has(role.id))
      .reduce((all, role) => all | BigInt(role.permissions), 0n);
    return base & PermissionFlagsBits.Administrator ? ALL_PERMISSIONS : base;
  }

  // --- Application commands ---------------------------------------------------------------------

  listCommands(): APIApplicationCommand[] {
    return this.commands;
  }

  /** Bulk overwrite: commands keep their id when their name (and type) stays. */
  replaceCommands(body: RESTPutAPIApplicationCommandsJSONBody): APIApplicationCommand[] {
    const previous = new Map(this.commands.map((c) => [`${c.type}:${c.name}`, c]));
    this.commands = body.map((command) => {
      const type = command.type ?? 1;
      const kept = previous.get(`${type}:${command.name}`);
      return {
        ...command,
        id: kept?.id ?? this.newId(),
        application_id: this.seed.application.id,
        type,
        description: 'description' in command ? command.description : '',
        default_member_permissions: command.default_member_permissions ?? null,
        version: this.newId(),
      } as APIApplicationCommand;
    });
    return this.commands;
  }

  private newId(): string {
    this.nextId += 1n;
    return this.nextId.toString();
  }
}

/** `list` with `item` in place of the entry of the same id, or added at the end. */
function replaceById<T extends { id: string }>(list: readonly T[], item: T): T[] {
  const at = list.findIndex((entry) => entry.id === item.id);
  return at < 0 ? [...list, item] : list.map((entry, i) => (i === at ? item : entry));
}

function withoutRoleOverwrite(channel: SeedChannel, roleId: string): SeedChannel {
  const overwrites = channel.permission_overwrites;
  if (!overwrites?.some((o) => o.id === roleId && o.type === OverwriteType.Role)) return channel;
  return {
    ...channel,
    permission_overwrites: overwrites.filter(
      (o) => !(o.id === roleId && o.type === OverwriteType.Role),
    ),
  };
}

function definedOnly<T extends object>(fields: Partial<T>): Partial<T> {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}
