import {
  ChannelType,
  type APIGuild,
  type APIGuildMember,
  type APIRole,
  type APIUser,
  type GuildMemberFlags,
  type GuildSystemChannelFlags,
  type RoleFlags,
  type UserFlags,
} from 'discord-api-types/v10';
import type {
  SeedChannel,
  SeedGuild,
  SeedMember,
  SeedRole,
} from 'src/platform/emulator/emulator.seed';

/*
 * The platform's REST shapes of the seed's users, guilds, roles, channels and members: every field
 * Discord's OpenAPI document requires, with the platform's defaults (test/fixtures/discord-openapi;
 * the emulator's answers are checked against it in test/platform/emulator-discord-contract).
 */

/** The platform's epoch (2015-01-01), from which a snowflake counts milliseconds in its top bits. */
const PLATFORM_EPOCH_MS = 1_420_070_400_000n;

/** When a snowflake was made: a channel's or thread's creation time. */
export function snowflakeTime(id: string): string {
  return new Date(Number((BigInt(id) >> 22n) + PLATFORM_EPOCH_MS)).toISOString();
}

/** A user as the platform serves it (a member's `user`): the seed's fields over its defaults. */
export function userObject(user: APIUser): APIUser {
  return {
    public_flags: 0 as UserFlags,
    flags: 0 as UserFlags,
    banner: null,
    accent_color: null,
    avatar_decoration_data: null,
    collectibles: null,
    primary_guild: null,
    ...user,
  };
}

/**
 * `GET /users/@me`: the user with its account's own fields. A bot's account is verified and has
 * no e-mail; a user's token with `identify` alone shows neither.
 */
export function currentUserObject(user: APIUser): APIUser {
  return {
    ...userObject(user),
    mfa_enabled: false,
    locale: 'en-US',
    premium_type: 0,
    ...(user.bot ? { verified: true, email: null } : {}),
  };
}

/** `GET /guilds/{id}` (with its roles). */
export function guildObject(guild: SeedGuild): APIGuild {
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
    nsfw: false,
    home_header: null,
  } as APIGuild;
}

export function roleObject(role: SeedRole): APIRole {
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

/** A guild channel (`GET /guilds/{id}/channels`), with the fields of its type. */
export function channelObject(guildId: string, channel: SeedChannel): Record<string, unknown> {
  return {
    id: channel.id,
    type: channel.type,
    guild_id: guildId,
    name: channel.name,
    position: channel.position,
    parent_id: channel.parent_id ?? null,
    permission_overwrites: channel.permission_overwrites ?? [],
    nsfw: channel.nsfw ?? false,
    flags: 0,
    ...fieldsOfType(channel),
  };
}

/** What a channel of each type carries beside the common fields, with the platform's defaults. */
function fieldsOfType(channel: SeedChannel): Record<string, unknown> {
  const topic = channel.topic ?? null;
  switch (channel.type) {
    case ChannelType.GuildText:
    case ChannelType.GuildAnnouncement:
      return { topic, last_message_id: null, rate_limit_per_user: 0 };
    case ChannelType.GuildVoice:
    case ChannelType.GuildStageVoice:
      return {
        last_message_id: null,
        rate_limit_per_user: 0,
        bitrate: 64_000,
        user_limit: 0,
        rtc_region: null,
      };
    case ChannelType.GuildForum:
    case ChannelType.GuildMedia:
      return {
        topic,
        last_message_id: null,
        rate_limit_per_user: 0,
        default_thread_rate_limit_per_user: 0,
        available_tags: [],
        default_reaction_emoji: null,
        default_sort_order: null,
        default_forum_layout: 0,
      };
    default:
      return {};
  }
}

/**
 * A thread (`GET /guilds/{id}/threads/active`): its `thread_metadata.archived` is the seed's
 * `archived`, which is what says whether a thread is archived; its owner is the guild's owner
 * unless the seed names one.
 */
export function threadObject(guild: SeedGuild, thread: SeedChannel): Record<string, unknown> {
  const created = snowflakeTime(thread.id);
  return {
    id: thread.id,
    type: thread.type,
    guild_id: guild.id,
    name: thread.name,
    parent_id: thread.parent_id ?? null,
    owner_id: thread.owner_id ?? guild.owner_id,
    flags: 0,
    last_message_id: null,
    rate_limit_per_user: 0,
    message_count: 0,
    member_count: 1,
    total_message_sent: 0,
    thread_metadata: {
      archived: thread.archived ?? false,
      archive_timestamp: created,
      auto_archive_duration: 1440,
      locked: false,
      create_timestamp: created,
    },
  };
}

/** `GET /guilds/{id}/members/{user_id}`, `GET /users/@me/guilds/{id}/member`. */
export function memberObject(member: SeedMember, user: APIUser | undefined): APIGuildMember {
  return {
    user: user && userObject(user),
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
