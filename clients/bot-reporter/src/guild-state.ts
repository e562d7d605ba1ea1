// The wire format of the guild-state feed (docs/guild-state.md) and the one definition of a guild
// state's hash. The service imports this file to check what it holds against the bot's hash, so
// both sides compute it with the same code. No imports beyond Node.js's own.

import { createHash } from 'node:crypto';

/** Reports per batch. */
export const MAX_STATE_REPORTS = 1_000;
/** The body of one batch, in bytes (the service refuses a larger one with 413 `BadRequest`). */
export const MAX_STATE_BATCH_BYTES = 1_048_576;
/** Per guild: the platform's own maxima, with room for threads (a third-party figure). */
export const MAX_STATE_ROLES = 250;
export const MAX_STATE_CHANNELS = 500;
export const MAX_STATE_THREADS = 2_000;
/** The channel flag the platform sets on a channel the bot cannot view (obfuscated). */
export const CHANNEL_FLAG_OBFUSCATED = 1 << 17;

export interface GuildStateRole {
  id: string;
  name: string;
  /** Decimal string of the permission bits. */
  permissions: string;
  position: number;
  managed: boolean;
}

export interface GuildStateOverwrite {
  /** A role id or a user id. */
  id: string;
  /** 0 a role, 1 a member. */
  type: 0 | 1;
  allow: string;
  deny: string;
}

/** A guild channel (not a thread), as the gateway holds it; an obfuscated one as it arrives. */
export interface GuildStateChannel {
  id: string;
  type: number;
  /** `___hidden___` for a channel the bot cannot view. */
  name: string | null;
  position: number;
  parent_id: string | null;
  /** Channel flags; `1 << 17` ({@link CHANNEL_FLAG_OBFUSCATED}) on a channel the bot cannot view. */
  flags: number;
  permission_overwrites: GuildStateOverwrite[];
}

/** An active thread the bot can view. */
export interface GuildStateThread {
  id: string;
  type: number;
  name: string | null;
  parent_id: string;
  flags: number;
  archived: boolean;
}

/** The bot's own member (the platform sends its updates without the privileged members intent). */
export interface GuildStateMember {
  user_id: string;
  roles: string[];
  /** ISO 8601; in the future while the member is timed out. */
  communication_disabled_until: string | null;
}

/** A guild as the bot's gateway connection holds it: what `GUILD_CREATE` brings. */
export interface GuildState {
  id: string;
  name: string;
  icon: string | null;
  owner_id: string;
  roles: GuildStateRole[];
  channels: GuildStateChannel[];
  threads: GuildStateThread[];
  bot_member: GuildStateMember;
}

/** The guild's own fields, as `GUILD_UPDATE` changes them. */
export interface GuildStateFields {
  name: string;
  icon: string | null;
  owner_id: string;
}

interface ReportBase {
  /** The report's place in its stream: 1, 2, 3, … without gaps. */
  seq: number;
  guild_id: string;
  /** When the bot applied the event (ISO 8601 with its offset, the bot's clock). */
  at: string;
  /**
   * {@link guildStateHash} of the guild as the bot holds it after this report. The service
   * compares it with its own copy and asks for the guild's full state when they differ.
   */
  hash?: string;
}

/**
 * One change to one guild, in the order the bot applied it.
 * - `guild_create`: the whole guild (on every `GUILD_CREATE`); it replaces what the service held
 *   and is also a join.
 * - `guild_delete`: `unavailable: true` is an outage (the state is kept, not trusted), otherwise
 *   the bot left (the state is dropped, and the guild left).
 * - `thread_list_sync`: the active threads of `channel_ids` (every channel when absent) are
 *   replaced with `threads`.
 */
export type GuildStateReport =
  | (ReportBase & { type: 'guild_create'; guild: GuildState })
  | (ReportBase & { type: 'guild_update'; guild: GuildStateFields })
  | (ReportBase & { type: 'guild_delete'; unavailable: boolean })
  | (ReportBase & { type: 'role_upsert'; role: GuildStateRole })
  | (ReportBase & { type: 'role_delete'; role_id: string })
  | (ReportBase & { type: 'channel_upsert'; channel: GuildStateChannel })
  | (ReportBase & { type: 'channel_delete'; channel_id: string })
  | (ReportBase & { type: 'thread_upsert'; thread: GuildStateThread })
  | (ReportBase & { type: 'thread_delete'; thread_id: string })
  | (ReportBase & {
      type: 'thread_list_sync';
      channel_ids?: string[];
      threads: GuildStateThread[];
    })
  | (ReportBase & { type: 'bot_member_update'; member: GuildStateMember });

export type GuildStateReportType = GuildStateReport['type'];

/**
 * One reporting process's stream for one shard. A process picks a new `id` when it starts and
 * numbers its reports from 1; a stream that started before the shard's current one is refused
 * (409 `VersionConflict`): a process left over from before a restart never overwrites newer state.
 */
export interface GuildStateStream {
  /** 1–64 characters of `A–Z a–z 0–9 _ -`, e.g. a random UUID. */
  id: string;
  /** When the process started reporting (ISO 8601 with its offset). */
  started_at: string;
}

/** `POST /internal/shards/{shard_id}/guild-state`. */
export interface GuildStateBatch {
  stream: GuildStateStream;
  /** In `seq` order; at most {@link MAX_STATE_REPORTS}; an empty batch is a heartbeat. */
  reports: GuildStateReport[];
}

/** The service's answer to a batch. */
export interface GuildStateReceipt {
  /** Reports that changed what the service holds. */
  applied: number;
  /** Reports the service had already applied (a retry); they change nothing. */
  duplicates: number;
  /** The `seq` the service expects next on this stream. */
  next_seq: number;
  /**
   * Reports were missed: nothing from `received_seq` on was applied. Send the stream again from
   * `expected_seq`, or, if those reports are gone, start a new stream with every guild's full state.
   */
  gap: { expected_seq: number; received_seq: number } | null;
  /** Guilds whose full state (`guild_create`) the service needs: its copy differs or is missing. */
  resync: string[];
}

// --- The hash ------------------------------------------------------------------------------------

const HASH_BYTES = 32;

/**
 * The hash of a guild's state: the XOR of one SHA-256 per part (the guild's own fields, each role,
 * channel and thread, the bot's member), each over a canonical form that ignores order (of the
 * lists, of overwrites and member roles) and spelling (`"0010"` and `"10"` permissions, time
 * zones). A change to one part changes the hash; the parts can be hashed once and combined.
 */
export function guildStateHash(state: GuildState): string {
  const sum = Buffer.alloc(HASH_BYTES);
  const add = (part: string): void => {
    const digest = createHash('sha256').update(part).digest();
    for (let i = 0; i < HASH_BYTES; i++) sum[i] ^= digest[i];
  };
  add(canonicalFields(state));
  add(canonicalMember(state.bot_member));
  for (const role of state.roles) add(canonicalRole(role));
  for (const channel of state.channels) add(canonicalChannel(channel));
  for (const thread of state.threads) add(canonicalThread(thread));
  return sum.toString('hex');
}

// The canonical form of each part, exported so that a holder of a guild's parts hashes only the
// part that changed (the reporter's copy: guild-state-copy.ts).

export function canonicalFields(state: GuildStateFields & { id: string }): string {
  return JSON.stringify(['guild', state.id, state.name, state.icon, state.owner_id]);
}

export function canonicalMember(member: GuildStateMember): string {
  return JSON.stringify([
    'member',
    member.user_id,
    [...member.roles].sort(),
    instant(member.communication_disabled_until),
  ]);
}

export function canonicalRole(role: GuildStateRole): string {
  return JSON.stringify([
    'role',
    role.id,
    role.name,
    bits(role.permissions),
    role.position,
    role.managed,
  ]);
}

export function canonicalChannel(channel: GuildStateChannel): string {
  const overwrites = [...channel.permission_overwrites]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.type - b.type))
    .map((o) => [o.id, o.type, bits(o.allow), bits(o.deny)]);
  return JSON.stringify([
    'channel',
    channel.id,
    channel.type,
    channel.name,
    channel.position,
    channel.parent_id,
    channel.flags,
    overwrites,
  ]);
}

export function canonicalThread(thread: GuildStateThread): string {
  return JSON.stringify([
    'thread',
    thread.id,
    thread.type,
    thread.name,
    thread.parent_id,
    thread.flags,
    thread.archived,
  ]);
}

function bits(value: string): string {
  try {
    return BigInt(value).toString();
  } catch {
    return value;
  }
}

function instant(value: string | null): string | null {
  if (value === null) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? value : new Date(ms).toISOString();
}
