// The reporter's copy of one guild: what it has told the service, so that it can attach the
// guild's hash to each report. guildStateHash is the XOR of one SHA-256 per part, so the copy keeps
// each part's digest and their running XOR: a change costs one part's hash, not the guild's.

import { createHash } from 'node:crypto';
import {
  CHANNEL_FLAG_OBFUSCATED,
  canonicalChannel,
  canonicalFields,
  canonicalMember,
  canonicalRole,
  canonicalThread,
  type GuildState,
  type GuildStateChannel,
  type GuildStateFields,
  type GuildStateMember,
  type GuildStateReport,
  type GuildStateRole,
  type GuildStateThread,
} from './guild-state.js';

/** Deleted ids a guild remembers, as the service does (docs/guild-state.md). */
export const MAX_DELETED_IDS = 1_000;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A report without its place in a stream: what the bot saw. */
export type GuildStateChange = DistributiveOmit<
  GuildStateReport,
  'seq' | 'guild_id' | 'at' | 'hash'
>;

/** A change to a guild already held (not its creation, nor its removal). */
export type GuildStatePartChange = Exclude<
  GuildStateChange,
  { type: 'guild_create' } | { type: 'guild_delete' }
>;

interface Part<T> {
  value: T;
  digest: Buffer;
}

const HASH_BYTES = 32;

/**
 * One guild, applied report by report: the one set of rules by which the reporter and the service
 * (which imports this file) fold a guild's changes, so that their hashes agree (docs/guild-state.md,
 * "Applying a change"). What the platform leaves to whoever mirrors a guild is done here:
 * - deleted roles, channels and threads are remembered (the newest 1,000) and a later upsert of one
 *   is ignored (the platform has sent a channel's update after its delete);
 * - a deleted role leaves the bot's member and every channel's overwrites;
 * - a deleted channel takes its threads, and so does a channel that turns obfuscated (the bot no
 *   longer sees it, and nothing announces that its threads went);
 * - a thread updated as archived leaves the active threads (it may come back unarchived);
 * - `thread_list_sync` replaces the listed parents' threads (all of them without `channel_ids`).
 */
export class GuildStateCopy {
  readonly id: string;
  /** An outage (`guild_delete` with `unavailable`): kept, not sent again until it is back. */
  unavailable = false;
  private readonly sum = Buffer.alloc(HASH_BYTES);
  private fields: Part<GuildStateFields>;
  private member: Part<GuildStateMember>;
  private readonly roles = new Map<string, Part<GuildStateRole>>();
  private readonly channels = new Map<string, Part<GuildStateChannel>>();
  private readonly threads = new Map<string, Part<GuildStateThread>>();
  /** Oldest first (a Set keeps insertion order). */
  private readonly deleted = new Set<string>();

  /**
   * Throws a RangeError for a state that lists a role, channel or thread twice. `deletedIds`, oldest
   * first: what a copy held before (the service keeps them between batches).
   */
  constructor(state: GuildState, deletedIds: Iterable<string> = []) {
    for (const id of deletedIds) this.forget(id);
    this.id = state.id;
    this.fields = this.part(canonicalFields(state), fieldsOf(state));
    this.member = this.part(canonicalMember(state.bot_member), state.bot_member);
    for (const role of state.roles) this.put(this.roles, role, canonicalRole, 'role');
    for (const channel of state.channels) {
      this.put(this.channels, channel, canonicalChannel, 'channel');
    }
    for (const thread of state.threads) this.put(this.threads, thread, canonicalThread, 'thread');
  }

  /** Deleted ids remembered, oldest first. */
  deletedIds(): string[] {
    return [...this.deleted];
  }

  /** {@link guildStateHash} of {@link state}, without hashing it whole. */
  hash(): string {
    return this.sum.toString('hex');
  }

  state(): GuildState {
    return {
      id: this.id,
      ...this.fields.value,
      roles: values(this.roles),
      channels: values(this.channels),
      threads: values(this.threads),
      bot_member: this.member.value,
    };
  }

  apply(change: GuildStatePartChange): void {
    switch (change.type) {
      case 'guild_update': {
        const fields = fieldsOf(change.guild);
        const next = this.part(canonicalFields({ id: this.id, ...fields }), fields);
        xorInto(this.sum, this.fields.digest);
        this.fields = next;
        return;
      }
      case 'role_upsert':
        if (!this.deleted.has(change.role.id)) this.put(this.roles, change.role, canonicalRole);
        return;
      case 'role_delete': {
        this.remove(this.roles, change.role_id);
        this.forget(change.role_id);
        const roles = this.member.value.roles;
        // The platform drops a deleted role from its members and overwrites too.
        if (roles.includes(change.role_id)) {
          this.setMember({
            ...this.member.value,
            roles: roles.filter((id) => id !== change.role_id),
          });
        }
        for (const { value: channel } of [...this.channels.values()]) {
          const kept = channel.permission_overwrites.filter(
            (overwrite) => !(overwrite.type === 0 && overwrite.id === change.role_id),
          );
          if (kept.length !== channel.permission_overwrites.length) {
            this.put(this.channels, { ...channel, permission_overwrites: kept }, canonicalChannel);
          }
        }
        return;
      }
      case 'channel_upsert':
        if (this.deleted.has(change.channel.id)) return;
        this.put(this.channels, change.channel, canonicalChannel);
        // Obfuscated: the bot no longer sees the channel, nor its threads.
        if ((change.channel.flags & CHANNEL_FLAG_OBFUSCATED) !== 0) {
          this.removeThreadsOf(change.channel.id);
        }
        return;
      case 'channel_delete':
        this.remove(this.channels, change.channel_id);
        // A channel's threads go with it.
        this.removeThreadsOf(change.channel_id);
        this.forget(change.channel_id);
        return;
      case 'thread_upsert':
        if (this.deleted.has(change.thread.id)) return;
        // Archived, a thread is no longer active: the gateway's copy holds active threads only.
        if (change.thread.archived) this.remove(this.threads, change.thread.id);
        else this.put(this.threads, change.thread, canonicalThread);
        return;
      case 'thread_delete':
        this.remove(this.threads, change.thread_id);
        this.forget(change.thread_id);
        return;
      case 'thread_list_sync': {
        const parents = change.channel_ids === undefined ? null : new Set(change.channel_ids);
        for (const [id, thread] of this.threads) {
          if (parents === null || parents.has(thread.value.parent_id))
            this.remove(this.threads, id);
        }
        for (const thread of change.threads) {
          if (!this.deleted.has(thread.id) && !thread.archived) {
            this.put(this.threads, thread, canonicalThread);
          }
        }
        return;
      }
      case 'bot_member_update':
        this.setMember(change.member);
        return;
    }
  }

  private removeThreadsOf(parentId: string): void {
    for (const [id, thread] of [...this.threads]) {
      if (thread.value.parent_id === parentId) this.remove(this.threads, id);
    }
  }

  private setMember(member: GuildStateMember): void {
    const next = this.part(canonicalMember(member), member);
    xorInto(this.sum, this.member.digest);
    this.member = next;
  }

  /** Hashes a part and adds it to the sum. */
  private part<T>(canonical: string, value: T): Part<T> {
    const digest = createHash('sha256').update(canonical).digest();
    xorInto(this.sum, digest);
    return { value, digest };
  }

  private put<T extends { id: string }>(
    parts: Map<string, Part<T>>,
    value: T,
    canonical: (value: T) => string,
    unique?: string,
  ): void {
    const old = parts.get(value.id);
    if (old !== undefined) {
      if (unique !== undefined) {
        throw new RangeError(`guild ${this.id} lists ${unique} ${value.id} twice`);
      }
      xorInto(this.sum, old.digest);
    }
    parts.set(value.id, this.part(canonical(value), value));
  }

  private remove<T>(parts: Map<string, Part<T>>, id: string): void {
    const old = parts.get(id);
    if (old === undefined) return;
    xorInto(this.sum, old.digest);
    parts.delete(id);
  }

  private forget(id: string): void {
    if (this.deleted.has(id)) return;
    this.deleted.add(id);
    if (this.deleted.size > MAX_DELETED_IDS) {
      const oldest = this.deleted.values().next();
      if (oldest.done !== true) this.deleted.delete(oldest.value);
    }
  }
}

function fieldsOf(fields: GuildStateFields): GuildStateFields {
  return { name: fields.name, icon: fields.icon, owner_id: fields.owner_id };
}

function values<T>(parts: Map<string, Part<T>>): T[] {
  return Array.from(parts.values(), (part) => part.value);
}

function xorInto(sum: Buffer, digest: Buffer): void {
  for (let i = 0; i < HASH_BYTES; i++) sum[i] ^= digest[i];
}
