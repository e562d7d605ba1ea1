import { createHash, randomBytes } from 'node:crypto';
import {
  PermissionFlagsBits,
  type GuildMemberFlags,
  type GuildSystemChannelFlags,
  type RoleFlags,
  type APIApplicationCommand,
  type APIGuild,
  type APIGuildMember,
  type APIRole,
  type APIUser,
  type RESTAPIPartialCurrentUserGuild,
  type RESTPutAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import type {
  EmulatorSeed,
  SeedChannel,
  SeedGuild,
  SeedMember,
  SeedRole,
} from 'src/platform/emulator/emulator.seed';

/** Every permission bit the platform defines: what an owner or an administrator holds. */
const ALL_PERMISSIONS = Object.values(PermissionFlagsBits).reduce((all, bit) => all | bit, 0n);
const THREAD_TYPES = new Set([10, 11, 12]);
/** Codes are short-lived on the platform (about 100 s); the demo allows a few minutes. */
const CODE_LIFETIME_MS = 10 * 60_000;
const ACCESS_TOKEN_LIFETIME_S = 604_800;
/**
 * Codes waiting to be exchanged: anyone may ask the demo for codes, so past this the oldest are
 * dropped (and expired ones always are).
 */
export const MAX_PENDING_CODES = 10_000;

export interface Grant {
  userId: string;
  scopes: string[];
  accessToken: string;
  refreshToken: string;
  expiresAt: number;
}

/** PKCE (RFC 7636): the challenge a code was issued with, which its exchange must answer. */
export interface CodeChallenge {
  challenge: string;
  method: 'S256' | 'plain';
}

interface PendingCode {
  userId: string;
  scopes: string[];
  redirectUri: string;
  expiresAt: number;
  challenge?: CodeChallenge;
}

/** The bot joined (`present`) or left a guild: what the platform's gateway would tell the bot. */
export interface BotMembershipChange {
  guildId: string;
  present: boolean;
}

/** The emulated platform's data: the seed plus what happens at run time (codes, tokens, commands). */
export class EmulatorState {
  private readonly users = new Map<string, APIUser>();
  private readonly guilds = new Map<string, SeedGuild>();
  private readonly codes = new Map<string, PendingCode>();
  private readonly grantsByAccess = new Map<string, Grant>();
  private readonly grantsByRefresh = new Map<string, Grant>();
  private commands: APIApplicationCommand[] = [];
  private nextId = 1_200_000_000_000_000_000n;
  private readonly botMembershipListeners = new Set<(change: BotMembershipChange) => void>();

  constructor(
    readonly seed: EmulatorSeed,
    private readonly now: () => number = Date.now,
  ) {
    for (const user of seed.users) this.users.set(user.id, user);
    for (const guild of seed.guilds) this.guilds.set(guild.id, guild);
    for (const code of seed.authorization_codes ?? []) {
      this.codes.set(code.code, {
        userId: code.user_id,
        scopes: code.scopes,
        redirectUri: code.redirect_uri,
        expiresAt: Number.POSITIVE_INFINITY,
      });
    }
    if (seed.commands) this.replaceCommands(seed.commands);
  }

  get botUserId(): string {
    return this.seed.application.id;
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

  /** Run-time change (tests, demo): `userId` joins the guild; the bot joins with its own id. */
  addMember(guildId: string, member: SeedMember): void {
    const guild = this.requireGuild(guildId);
    const joins = member.user_id === this.botUserId && !this.member(guild, this.botUserId);
    guild.members = [...guild.members.filter((m) => m.user_id !== member.user_id), member];
    if (joins) this.announce({ guildId, present: true });
  }

  /** Run-time change (tests, demo): `userId` leaves the guild, or the bot, with its own id. */
  removeMember(guildId: string, userId: string): void {
    const guild = this.requireGuild(guildId);
    const leaves = userId === this.botUserId && !!this.member(guild, userId);
    guild.members = guild.members.filter((member) => member.user_id !== userId);
    if (leaves) this.announce({ guildId, present: false });
  }

  /** Run-time change (tests, demo): a new guild; with the bot among its members, the bot joins. */
  addGuild(guild: SeedGuild): void {
    if (this.guilds.has(guild.id)) throw new Error(`guild ${guild.id} exists`);
    this.guilds.set(guild.id, guild);
    if (this.member(guild, this.botUserId)) this.announce({ guildId: guild.id, present: true });
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

  private announce(change: BotMembershipChange): void {
    for (const listener of this.botMembershipListeners) listener(change);
  }

  private requireGuild(guildId: string): SeedGuild {
    const guild = this.guilds.get(guildId);
    if (!guild) throw new Error(`unknown guild ${guildId}`);
    return guild;
  }

  // --- OAuth2 -----------------------------------------------------------------------------------

  issueCode(
    userId: string,
    scopes: string[],
    redirectUri: string,
    challenge?: CodeChallenge,
  ): string {
    if (!this.users.has(userId)) throw new Error(`unknown user ${userId}`);
    const now = this.now();
    this.purgeCodes(now);
    const code = randomBytes(15).toString('base64url');
    this.codes.set(code, {
      userId,
      scopes,
      redirectUri,
      expiresAt: now + CODE_LIFETIME_MS,
      challenge,
    });
    return code;
  }

  /** Codes issued and neither exchanged nor dropped yet. */
  get pendingCodes(): number {
    return this.codes.size;
  }

  /** Drops expired codes, then the oldest while there is no room for one more. */
  private purgeCodes(now: number): void {
    for (const [code, pending] of this.codes) {
      if (pending.expiresAt < now) this.codes.delete(code);
      // Issued codes all live CODE_LIFETIME_MS, in insertion order: the rest are younger.
      else if (Number.isFinite(pending.expiresAt)) break;
    }
    for (const code of this.codes.keys()) {
      if (this.codes.size < MAX_PENDING_CODES) break;
      this.codes.delete(code);
    }
  }

  /**
   * Redeems a code once; a refusal with the token endpoint's `error_description` when it is
   * unknown, used, expired or for another redirect, or the verifier is wrong. A refused verifier
   * leaves the code redeemable, so whoever sees a code without its verifier cannot spend it.
   */
  redeemCode(code: string, redirectUri: string, verifier?: string): Grant | CodeRefusal {
    const pending = this.codes.get(code);
    if (!pending || pending.expiresAt < this.now() || pending.redirectUri !== redirectUri) {
      this.codes.delete(code);
      return { refused: CODE_REFUSALS.invalidCode };
    }
    // A verifier for a code issued without a challenge is refused too (OAuth 2.1: no downgrade).
    if (!pending.challenge && verifier !== undefined) {
      return { refused: CODE_REFUSALS.verifierWithoutChallenge };
    }
    if (pending.challenge && !answersChallenge(pending.challenge, verifier)) {
      return { refused: CODE_REFUSALS.invalidCode };
    }
    this.codes.delete(code);
    return this.createGrant(pending.userId, pending.scopes);
  }

  /** Rotates a grant: the old refresh and access tokens stop working. */
  refresh(refreshToken: string): Grant | undefined {
    const grant = this.grantsByRefresh.get(refreshToken);
    if (!grant) return undefined;
    this.revokeGrant(grant);
    return this.createGrant(grant.userId, grant.scopes);
  }

  /** Revoking either token of an authorization kills all of its tokens, as on the platform. */
  revoke(token: string): void {
    const grant = this.grantsByAccess.get(token) ?? this.grantsByRefresh.get(token);
    if (grant) this.revokeGrant(grant);
  }

  grantForAccessToken(token: string): Grant | undefined {
    const grant = this.grantsByAccess.get(token);
    return grant && grant.expiresAt > this.now() ? grant : undefined;
  }

  private createGrant(userId: string, scopes: string[]): Grant {
    const grant: Grant = {
      userId,
      scopes,
      accessToken: randomBytes(24).toString('base64url'),
      refreshToken: randomBytes(24).toString('base64url'),
      expiresAt: this.now() + ACCESS_TOKEN_LIFETIME_S * 1000,
    };
    this.grantsByAccess.set(grant.accessToken, grant);
    this.grantsByRefresh.set(grant.refreshToken, grant);
    return grant;
  }

  private revokeGrant(grant: Grant): void {
    this.grantsByAccess.delete(grant.accessToken);
    this.grantsByRefresh.delete(grant.refreshToken);
  }

  // --- Shapes as the platform serves them -------------------------------------------------------

  guildObject(guild: SeedGuild): APIGuild {
    return {
      id: guild.id,
      name: guild.name,
      icon: guild.icon,
      splash: null,
      discovery_splash: null,
      banner: null,
      description: null,
      owner_id: guild.owner_id,
      application_id: null,
      region: 'deprecated',
      afk_channel_id: null,
      afk_timeout: 300,
      widget_enabled: false,
      widget_channel_id: null,
      system_channel_id: null,
      system_channel_flags: 0 as GuildSystemChannelFlags,
      rules_channel_id: null,
      public_updates_channel_id: null,
      safety_alerts_channel_id: null,
      verification_level: 1,
      default_message_notifications: 1,
      explicit_content_filter: 2,
      mfa_level: 0,
      nsfw_level: 0,
      preferred_locale: 'en-US',
      premium_progress_bar_enabled: false,
      premium_tier: 0,
      premium_subscription_count: 0,
      roles: guild.roles.map(roleObject),
      emojis: [],
      stickers: [],
      features: (guild.features ?? []) as APIGuild['features'],
      max_presences: null,
      max_members: 500_000,
      vanity_url_code: null,
      max_video_channel_users: 25,
      max_stage_video_channel_users: 50,
      hub_type: null,
      incidents_data: null,
    } as APIGuild;
  }

  /** `GET /guilds/{id}/channels`: like the platform, without threads. */
  channelObjects(guild: SeedGuild): Record<string, unknown>[] {
    return guild.channels
      .filter((channel) => !THREAD_TYPES.has(channel.type))
      .map((channel) => channelObject(guild.id, channel));
  }

  threadObjects(guild: SeedGuild): Record<string, unknown>[] {
    return guild.channels
      .filter((channel) => THREAD_TYPES.has(channel.type))
      .map((channel) => channelObject(guild.id, channel));
  }

  memberObject(member: SeedMember): APIGuildMember {
    return {
      user: this.users.get(member.user_id),
      nick: member.nick ?? null,
      avatar: null,
      banner: null,
      roles: member.roles,
      joined_at: member.joined_at,
      premium_since: null,
      deaf: false,
      mute: false,
      flags: 0 as GuildMemberFlags,
      pending: false,
      communication_disabled_until: member.communication_disabled_until ?? null,
    } as APIGuildMember;
  }

  /** `GET /users/@me/guilds` for a user: the guilds the user is in, by ascending id. */
  partialGuildsOf(
    userId: string,
    page: { after?: string; before?: string; limit: number },
  ): RESTAPIPartialCurrentUserGuild[] {
    return [...this.guilds.values()]
      .filter((guild) => this.member(guild, userId))
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

function roleObject(role: SeedRole): APIRole {
  return {
    id: role.id,
    name: role.name,
    color: role.color ?? 0,
    colors: { primary_color: role.color ?? 0, secondary_color: null, tertiary_color: null },
    hoist: role.hoist ?? false,
    icon: null,
    unicode_emoji: null,
    position: role.position,
    permissions: role.permissions,
    managed: role.managed ?? false,
    mentionable: role.mentionable ?? false,
    flags: 0 as RoleFlags,
    ...(role.tags ? { tags: role.tags } : {}),
  };
}

function channelObject(guildId: string, channel: SeedChannel): Record<string, unknown> {
  return {
    id: channel.id,
    type: channel.type,
    guild_id: guildId,
    name: channel.name,
    position: channel.position,
    parent_id: channel.parent_id ?? null,
    permission_overwrites: channel.permission_overwrites ?? [],
    nsfw: channel.nsfw ?? false,
    ...(channel.topic !== undefined ? { topic: channel.topic } : {}),
    flags: 0,
  };
}

export function compareSnowflakes(a: string, b: string): number {
  const diff = BigInt(a) - BigInt(b);
  return diff === 0n ? 0 : diff < 0n ? -1 : 1;
}

/** Why the token endpoint refuses a code, as its `error_description`. */
export const CODE_REFUSALS = {
  invalidCode: 'Invalid "code" in request.',
  verifierWithoutChallenge:
    'A "code_verifier" was sent for a code issued without a "code_challenge".',
} as const;

export interface CodeRefusal {
  refused: (typeof CODE_REFUSALS)[keyof typeof CODE_REFUSALS];
}

/** Whether `verifier` is the one the challenge was made from (RFC 7636 §4.6). */
function answersChallenge(challenge: CodeChallenge, verifier: string | undefined): boolean {
  if (verifier === undefined) return false;
  const expected =
    challenge.method === 'S256'
      ? createHash('sha256').update(verifier).digest('base64url')
      : verifier;
  return expected === challenge.challenge;
}
