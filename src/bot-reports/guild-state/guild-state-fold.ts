import { setImmediate } from 'node:timers/promises';
import {
  MAX_STATE_BATCH_BYTES,
  MAX_STATE_CHANNELS,
  MAX_STATE_ROLES,
  MAX_STATE_THREADS,
  type GuildState,
  type GuildStateReport,
} from 'clients/bot-reporter/src/guild-state';
import { GuildStateCopy } from 'clients/bot-reporter/src/guild-state-copy';
import type { GuildStateReportDto } from 'src/bot-reports/guild-state/dto/guild-state.dto';
import type { HeldGuild } from 'src/bot-reports/guild-state/guild-state.repository';

// How a batch's reports fold onto the guilds the service holds (docs/guild-state.md): plain
// functions, by the rules the bot's reporter shares (GuildStateCopy); the feed's service orders
// them, reads and writes.

/**
 * Held states a batch reads into memory at once, at most: this many guilds, and (past the first)
 * this many bytes of their JSON, however many guilds the batch names (docs/guild-state.md,
 * costs). Guilds whose reports start with their whole state read none.
 */
export const GUILDS_AT_ONCE = 25;
export const HELD_BYTES_AT_ONCE = 4 * 1_048_576;
/**
 * What one guild's state may hold, as a `guild_create` may: its lists' caps, and the JSON one
 * batch can carry. A change past them is not applied (docs/guild-state.md, "Caps").
 */
export const GUILD_STATE_CAPS = {
  roles: MAX_STATE_ROLES,
  channels: MAX_STATE_CHANNELS,
  threads: MAX_STATE_THREADS,
  bytes: MAX_STATE_BATCH_BYTES,
} as const;

/** One guild's reports of a batch, applied in order. */
export interface GuildWork {
  /** The guild as held; undefined when nothing is (or the bot left it). */
  copy: GuildStateCopy | undefined;
  unavailable: boolean;
  /** The stream whose `guild_create` the held state comes from. */
  streamId: string;
  /** Whether the row must be written. */
  dirty: boolean;
  drifted: boolean;
  reportedAt: Date;
}

/**
 * A `guild_create` of the batch made ready before the transaction: its copy, and unless the state
 * stored has its hash, its state and row JSON.
 */
export type Prepared = ReadonlyMap<
  object,
  { copy: GuildStateCopy; state?: GuildState; json?: string }
>;

/** Roles, channels and threads prepared between two turns of the event loop (about 85 KB). */
const PREPARE_SLICE_PARTS = 500;

/**
 * Each `guild_create`'s copy (its hash, part by part) and, where the stored state's hash differs
 * (`stored`), its row's JSON: made before the feeds' transaction is opened, handing the event
 * loop back every PREPARE_SLICE_PARTS, so that a shard's READY arriving does not hold an
 * instance's other requests for a whole batch.
 */
export async function prepareWhole(
  reports: { report: GuildStateReportDto }[],
  stored: ReadonlyMap<string, string>,
): Promise<Prepared> {
  const prepared = new Map<object, { copy: GuildStateCopy; state?: GuildState; json?: string }>();
  let slice = 0;
  for (const { report } of reports) {
    if (report.type !== 'guild_create') continue;
    const guild = report.guild as GuildState;
    const copy = new GuildStateCopy(guild);
    if (stored.get(report.guild_id) === copy.hash()) prepared.set(report, { copy });
    else {
      const state = copy.state();
      prepared.set(report, { copy, state, json: JSON.stringify(state) });
    }
    slice += guild.roles.length + guild.channels.length + guild.threads.length;
    if (slice >= PREPARE_SLICE_PARTS) {
      slice = 0;
      await setImmediate();
    }
  }
  return prepared;
}

/**
 * The guilds whose held states are read, in groups: GUILDS_AT_ONCE at most, and past a group's
 * first, no more than HELD_BYTES_AT_ONCE of their JSON.
 */
export function heldGroups(
  guildIds: readonly string[],
  facts: ReadonlyMap<string, { bytes?: number }>,
): string[][] {
  const groups: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const guildId of guildIds) {
    const size = facts.get(guildId)?.bytes ?? 0;
    if (
      current.length > 0 &&
      (current.length >= GUILDS_AT_ONCE || bytes + size > HELD_BYTES_AT_ONCE)
    ) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(guildId);
    bytes += size;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** The cap a guild's state is past (as a `guild_create` may hold it), or null. */
export function capExceeded(state: GuildState, jsonBytes: number): string | null {
  if (state.roles.length > GUILD_STATE_CAPS.roles) return `${GUILD_STATE_CAPS.roles} roles`;
  if (state.channels.length > GUILD_STATE_CAPS.channels) {
    return `${GUILD_STATE_CAPS.channels} channels`;
  }
  if (state.threads.length > GUILD_STATE_CAPS.threads) return `${GUILD_STATE_CAPS.threads} threads`;
  if (jsonBytes > GUILD_STATE_CAPS.bytes) {
    return `${GUILD_STATE_CAPS.bytes} bytes of JSON (what one batch can carry)`;
  }
  return null;
}

/**
 * One guild's reports of a batch, in order, folded onto what is held of it: what changed, whether
 * its full state is needed (unknown, drifted, or from an older stream), and the join or leave they
 * imply (the newest).
 */
export function foldGuild(
  row: { held: HeldGuild; streamId: string } | undefined,
  reports: { report: GuildStateReport; at: Date }[],
  streamId: string,
  prepared: Prepared,
): {
  work: GuildWork;
  applied: number;
  resync: boolean;
  /** A `guild_create` replaced what was held. */
  replaced: boolean;
  membership: { present: boolean; at: Date } | undefined;
} {
  const work = workOf(row, streamId, reports[0].at);
  let applied = 0;
  let resync = false;
  let replaced = false;
  let membership: { present: boolean; at: Date } | undefined;
  // Only the newest hash is compared: the bot's copy after the last of these reports.
  const lastHashed = reports.findLastIndex(({ report }) => report.hash !== undefined);
  reports.forEach(({ report, at }, i) => {
    work.reportedAt = at;
    if (report.type === 'guild_create') {
      work.copy = prepared.get(report)?.copy ?? new GuildStateCopy(report.guild);
      work.unavailable = false;
      work.streamId = streamId;
      work.drifted = false;
      work.dirty = true;
      resync = false;
      replaced = true;
      membership = { present: true, at };
      applied += 1;
    } else if (report.type === 'guild_delete' && !report.unavailable) {
      work.copy = undefined;
      replaced = false;
      membership = { present: false, at };
      applied += 1;
      return;
    } else if (!work.copy) {
      resync = true;
      return;
    } else if (report.type === 'guild_delete') {
      if (!work.unavailable) {
        work.unavailable = true;
        work.dirty = true;
        applied += 1;
      }
    } else {
      const before = work.copy.hash();
      work.copy.apply(report);
      if (work.copy.hash() !== before) {
        work.dirty = true;
        applied += 1;
      }
      // A state from an older stream (before a restart) may have missed changes: the new
      // process's guild_create is needed before it is used again.
      if (work.streamId !== streamId) resync = true;
    }
    if (i === lastHashed && report.hash !== work.copy.hash()) {
      work.drifted = true;
      work.dirty = true;
      resync = true;
    }
  });
  return { work, applied, resync, replaced, membership };
}

/** What a batch starts from for one guild: its row, or nothing. */
function workOf(
  row: { held: HeldGuild; streamId: string } | undefined,
  streamId: string,
  at: Date,
): GuildWork {
  return {
    copy: row ? new GuildStateCopy(row.held.state, row.held.deletedIds) : undefined,
    unavailable: row?.held.unavailable ?? false,
    streamId: row?.streamId ?? streamId,
    dirty: false,
    drifted: false,
    reportedAt: at,
  };
}
