import type {
  APIOverwrite,
  APIUser,
  ChannelType,
  RESTPutAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';

/** A role as seeded: the platform's fields that matter here; the rest get platform defaults. */
export interface SeedRole {
  id: string;
  name: string;
  /** Decimal string of the permission bits. */
  permissions: string;
  position: number;
  color?: number;
  hoist?: boolean;
  managed?: boolean;
  mentionable?: boolean;
  /** Set on the role the platform creates for a bot; `premium_subscriber` marks the booster role. */
  tags?: { bot_id?: string; premium_subscriber?: null };
}

export interface SeedChannel {
  id: string;
  type: ChannelType;
  name: string;
  position: number;
  parent_id?: string | null;
  topic?: string | null;
  nsfw?: boolean;
  permission_overwrites?: APIOverwrite[];
  /**
   * Threads only: an archived thread is not active, so neither the gateway nor
   * `GET /guilds/{id}/threads/active` lists it. Absent means active.
   */
  archived?: boolean;
  /** Threads only: who started it; the guild's owner when absent. */
  owner_id?: string;
}

export interface SeedMember {
  user_id: string;
  roles: string[];
  nick?: string | null;
  joined_at: string;
  /** ISO 8601; in the future means the member is timed out. */
  communication_disabled_until?: string | null;
}

export interface SeedGuild {
  id: string;
  name: string;
  icon: string | null;
  owner_id: string;
  features?: string[];
  /** The first role is @everyone and its id must equal the guild id. */
  roles: SeedRole[];
  channels: SeedChannel[];
  /** The bot is in the guild exactly when its user id is among the members. */
  members: SeedMember[];
}

export interface SeedAuthorizationCode {
  code: string;
  user_id: string;
  scopes: string[];
  redirect_uri: string;
}

/** Everything the emulator serves. */
export interface EmulatorSeed {
  application: {
    /** The OAuth2 client id, which is also the bot's user id. */
    id: string;
    secret: string;
    bot_token: string;
  };
  /** Every user the platform knows, the bot included (`bot: true`). */
  users: APIUser[];
  guilds: SeedGuild[];
  /** Codes that exist from the start (each usable once); more are issued at run time. */
  authorization_codes?: SeedAuthorizationCode[];
  /**
   * The scopes of a code issued without naming any (the demo's login, the tests' `loginAs`);
   * `identify guilds` when absent. Add `guilds.members.read` to let those logins read the user's
   * own member (`GET /users/@me/guilds/{id}/member`).
   */
  login_scopes?: string[];
  commands?: RESTPutAPIApplicationCommandsJSONBody;
}
