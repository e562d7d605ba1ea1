// The wire format of the membership feed's routes, as the service documents them. Written by hand
// until the routes are in openapi.json; then these can become aliases of clients/typescript's
// generated schema.

/** The most guild ids one snapshot part may carry. */
export const MAX_SNAPSHOT_PART = 4_000;
/** The most events one batch may carry. */
export const MAX_EVENT_BATCH = 1_000;

/** `PUT /internal/shards/{shard_id}/guilds`: one part of a shard's guild snapshot. */
export interface GuildSnapshotPart {
  /** How many shards the bot runs. */
  shard_count: number;
  /** When the shard's READY arrived (ISO 8601); the same in every part of one snapshot. */
  snapshot_at: string;
  /** How many guild ids the whole snapshot holds. */
  total: number;
  /** At most {@link MAX_SNAPSHOT_PART} unique ids, every one on this shard. */
  guild_ids: string[];
}

/** The answer to a snapshot part: how far the snapshot has come. */
export interface GuildSnapshotProgress {
  shard_id: number;
  snapshot_at: string;
  received: number;
  total: number;
  complete: boolean;
}

export type GuildEventType = 'join' | 'leave';

export interface GuildEvent {
  type: GuildEventType;
  guild_id: string;
  /** When the bot saw it (ISO 8601): the service orders a guild's events by this. */
  at: string;
}

/** `POST /internal/shards/{shard_id}/guild-events`; an empty batch is a heartbeat. */
export interface GuildEventBatch {
  /** At most {@link MAX_EVENT_BATCH}. */
  events: GuildEvent[];
}

export interface GuildEventsResult {
  applied: number;
  /** Events older than what the service already holds for their guild (a replay, a late batch). */
  ignored: number;
}

/** One shard in `GET /internal/bot-guilds`. */
export interface BotGuildsShard {
  shard_id: number;
  guilds: number;
  snapshot_at: string | null;
  reported_at: string | null;
  live: boolean;
}

/** `GET /internal/bot-guilds`: whether the service currently trusts the feed. */
export interface BotGuildsStatus {
  live: boolean;
  shard_count: number | null;
  /** Seconds of silence after which a shard, and so the feed, is no longer live. */
  stale_after: number;
  guilds: number;
  shards: BotGuildsShard[];
}

/** Every error answer of the service. */
export interface ApiErrorBody {
  message: string;
  code: string;
  details?: { field: string; message: string }[];
}

/** Discord's sharding rule: the shard that receives a guild's gateway events. */
export function shardOfGuild(guildId: string, shardCount: number): number {
  return Number((BigInt(guildId) >> 22n) % BigInt(shardCount));
}

const SNOWFLAKE = /^[0-9]{1,20}$/;

export function isSnowflake(value: unknown): value is string {
  return typeof value === 'string' && SNOWFLAKE.test(value) && BigInt(value) < 2n ** 64n;
}
