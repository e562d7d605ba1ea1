import type {
  APIGuild,
  APIGuildMember,
  APIRole,
  APIUser,
  GuildMemberFlags,
  GuildSystemChannelFlags,
  RoleFlags,
} from 'discord-api-types/v10';
import type {
  SeedChannel,
  SeedGuild,
  SeedMember,
  SeedRole,
} from 'src/platform/emulator/emulator.seed';

/* The platform's REST shapes of the seed's guilds, roles, channels and members: its fields and defaults. */

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
    ...(channel.topic !== undefined ? { topic: channel.topic } : {}),
    flags: 0,
  };
}

/** `GET /guilds/{id}/members/{user_id}`, `GET /users/@me/guilds/{id}/member`. */
export function memberObject(member: SeedMember, user: APIUser | undefined): APIGuildMember {
  return {
    user,
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
