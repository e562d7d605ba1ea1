import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { AppException } from 'src/common/errors/app.exception';
import { Clock } from 'src/common/time/clock';
import { GuildAccessService } from 'src/guilds/guild-access.service';
import type { PermissionMember, PermissionTest } from 'src/settings/schema/settings-permissions';
import {
  keysByEntity,
  planWrite,
  requireBounded,
  revisionOf,
  writeOf,
  type CheckedWrite,
  type PlannedWrite,
} from 'src/settings/engine/change-plan';
import { ChangeState } from 'src/settings/engine/change-state';
import { EffectWriter } from 'src/settings/engine/effect-writer';
import type { SettingsAuthor } from 'src/settings/engine/settings-author';
import { SettingsCache, type GuildSettingsCache } from 'src/settings/engine/settings-cache';
import {
  SettingsCallers,
  type Caller,
  type NamedMembers,
} from 'src/settings/engine/settings-callers';
import {
  checkRequest,
  type CheckedRequest,
  type SettingsRequest,
} from 'src/settings/engine/settings-checks';
import { SettingsEntriesRepository } from 'src/settings/engine/settings-entries.repository';
import { GuildSettingsWriters } from 'src/settings/engine/guild-settings-writers';
import { stableJson, toApi } from 'src/settings/engine/settings-rows';
import type { SettingsRevisionEntity } from 'src/settings/engine/settings-revision.entity';
import { SettingsRegistry, type RegisteredSetting } from 'src/settings/schema/settings-registry';
import { SettingsChangedEvent, summariseRevision } from 'src/settings/engine/settings.events';

/** What a write produced: its answer's data, and the revisions it recorded. */
export interface AppliedWrite {
  data: unknown;
  revisions: SettingsRevisionEntity[];
}

/** A write's outcome in a trial: what it produced, or the refusal it met. */
export type WriteOutcome = ({ ok: true } & AppliedWrite) | { ok: false; error: AppException };

/** Where a View's answer is cached: the setting and the query. */
function viewKey(setting: RegisteredSetting, fields: unknown): string {
  return `view:${setting.schema.id}:${stableJson(fields)}`;
}

/** A refusal is an AppException; anything else is a failure, and stays one. */
function refusalOf(error: unknown): WriteOutcome {
  if (error instanceof AppException) return { ok: false, error };
  throw error;
}

/** A change refused while it was being stored: the transaction is rolled back, the refusal answered. */
class RefusedChange extends Error {
  constructor(readonly refusal: AppException) {
    super(refusal.message);
  }
}

/**
 * The engine's entry points (docs/settings-engine.md): for a declared setting, checks the
 * operation, the caller's `<setting>.<operation>` permission, the fields (its validation_template),
 * references against the live guild and the bot's permissions (`engine/settings-checks`), then
 * plans the change against the stored rows (`engine/change-plan`) and applies it in one
 * transaction with one revision per entry changed, and answers `{type: "Ok", data}`.
 */
@Injectable()
export class SettingsService {
  constructor(
    private readonly registry: SettingsRegistry,
    private readonly guilds: GuildAccessService,
    private readonly callers: SettingsCallers,
    private readonly cache: SettingsCache,
    private readonly entries: SettingsEntriesRepository,
    private readonly clock: Clock,
    private readonly events: EventEmitter2,
    private readonly writers: GuildSettingsWriters,
  ) {}

  /** Every module's settings, for a guild the bot is in (membership not required). */
  async list(
    guildId: string,
    caller: string,
  ): Promise<Record<string, { type: 'Ok'; data: unknown[] }>> {
    await this.guilds.assertBotIn(guildId, caller);
    return this.registry.groups();
  }

  /**
   * Runs one operation and answers its JSON (`{"type":"Ok","data":…}`), encoded: a View answer
   * comes from the guild's cache that way, so repeated reads of a large setting are neither
   * serialised nor encoded again.
   */
  async execute(
    guildId: string,
    author: SettingsAuthor,
    request: SettingsRequest,
  ): Promise<Buffer> {
    const cache = await this.cache.forGuild(guildId);
    const caller = await this.callers.resolve(guildId, author, cache);
    const checked = this.check(caller, request);
    if (checked.operation === 'View') {
      return this.view(checked.setting, guildId, checked.fields, cache);
    }
    const [applied] = await this.commitOrThrow(caller, author, [writeOf(checked)]);
    return Buffer.from(JSON.stringify({ type: 'Ok', data: applied.data }));
  }

  /**
   * Several writes as one change: each checked exactly as `execute` checks it (permission,
   * validation, references, the bot's permissions, the setting's own rule), then all applied in
   * one transaction, or none (the first refusal is thrown). Answers each write's data and the
   * revisions it recorded.
   */
  async executeAll(
    guildId: string,
    author: SettingsAuthor,
    requests: readonly (SettingsRequest & { reverts?: number })[],
  ): Promise<AppliedWrite[]> {
    const cache = await this.cache.forGuild(guildId);
    const caller = await this.callers.resolve(guildId, author, cache);
    const writes = requests.map((request) => writeOf(this.check(caller, request), request.reverts));
    return this.commitOrThrow(caller, author, writes, { bulk: true });
  }

  /**
   * Several writes judged one by one and applied as one change only if none is refused: each is
   * checked as `execute` checks it, then planned in order against the stored rows as the change
   * sees them (a refused write leaves no effect for the ones after it). With `apply`, and
   * nothing refused, the change is stored in one transaction; otherwise nothing is written, not
   * even in a transaction rolled back: a dry run reads the rows its writes touch and computes the
   * rest. Answers every write's outcome: what it produced, or why it was refused.
   */
  async trial(
    guildId: string,
    author: SettingsAuthor,
    requests: readonly SettingsRequest[],
    { apply }: { apply: boolean },
  ): Promise<{ committed: boolean; outcomes: WriteOutcome[] }> {
    const cache = await this.cache.forGuild(guildId);
    const caller = await this.callers.resolve(guildId, author, cache);
    const outcomes: WriteOutcome[] = [];
    const passed: { index: number; write: CheckedWrite }[] = [];
    for (const [index, request] of requests.entries()) {
      try {
        passed.push({ index, write: writeOf(this.check(caller, request)) });
        outcomes.push({ ok: true, data: null, revisions: [] });
      } catch (error) {
        outcomes.push(refusalOf(error));
      }
    }
    // No lock and no transaction for a change with nothing to write.
    if (passed.length === 0) return { committed: false, outcomes };
    const writes = passed.map(({ write }) => write);
    requireBounded(writes);
    const members = await this.callers.namedIn(caller, author, writes);
    if (apply && passed.length === requests.length) {
      const commit = await this.commit(caller, author, writes, members, { bulk: true });
      if (commit.committed) {
        return {
          committed: true,
          outcomes: commit.applied.map((applied) => ({ ok: true, ...applied })),
        };
      }
      // Refused by a change stored meanwhile: reported as a dry run reports it, below.
    }
    const planned = await this.perform(
      new ChangeState(this.entries, this.entries.manager, caller.context.guild.id, false),
      caller,
      author,
      writes,
      members,
      { store: null },
    );
    for (const [i, { index }] of passed.entries()) outcomes[index] = planned[i];
    return { committed: false, outcomes };
  }

  /**
   * What the caller may do in the guild (the permission model's answer, read through the guild's
   * settings cache): a test of one permission string, and a refusal (`.require`).
   */
  async may(guildId: string, author: SettingsAuthor): Promise<PermissionTest> {
    const cache = await this.cache.forGuild(guildId);
    return this.callers.testFor(await this.callers.resolve(guildId, author, cache));
  }

  private check(caller: Caller, request: SettingsRequest): CheckedRequest {
    return checkRequest(
      this.registry,
      (who, permission) => this.callers.require(who, permission),
      caller,
      request,
    );
  }

  /** `commit`, a refusal thrown. */
  private async commitOrThrow(
    caller: Caller,
    author: SettingsAuthor,
    writes: readonly CheckedWrite[],
    options: { bulk?: boolean } = {},
  ): Promise<AppliedWrite[]> {
    requireBounded(writes);
    const members = await this.callers.namedIn(caller, author, writes);
    const commit = await this.commit(caller, author, writes, members, options);
    if (!commit.committed) throw commit.refusal;
    return commit.applied;
  }

  /**
   * Stores checked writes as one change: in one transaction under the guild's settings lock (a
   * writer waits its turn without a connection: GuildSettingsWriters), each planned against the
   * rows as the transaction sees them and stored at once; the first refusal rolls it all back.
   */
  private async commit(
    caller: Caller,
    author: SettingsAuthor,
    writes: readonly CheckedWrite[],
    members: NamedMembers,
    { bulk = false }: { bulk?: boolean },
  ): Promise<
    { committed: true; applied: AppliedWrite[] } | { committed: false; refusal: AppException }
  > {
    const guildId = caller.context.guild.id;
    let applied: AppliedWrite[];
    try {
      applied = await this.writers.write(
        guildId,
        async (manager) => {
          const store = new EffectWriter(this.entries, manager, guildId);
          const state = new ChangeState(this.entries, manager, guildId, true, () => store.flush());
          const outcomes = await this.perform(state, caller, author, writes, members, { store });
          return outcomes.map((outcome) => {
            if (!outcome.ok) throw new RefusedChange(outcome.error);
            return outcome;
          });
        },
        { bulk },
      );
    } catch (error) {
      if (error instanceof RefusedChange) return { committed: false, refusal: error.refusal };
      throw error;
    }
    await this.cache.changed(guildId);
    this.announce(
      guildId,
      applied.flatMap((write) => write.revisions),
    );
    return { committed: true, applied };
  }

  /**
   * Plans each write in order against `state` (the permission data read again through it, so an
   * earlier write of the same change is seen) and, with a `store`, writes its effects and then
   * the revisions. A refused write leaves no effect; with a store, planning stops at it (the
   * transaction is rolled back).
   */
  private async perform(
    state: ChangeState,
    caller: Caller,
    author: SettingsAuthor,
    writes: readonly CheckedWrite[],
    members: NamedMembers,
    { store }: { store: EffectWriter | null },
  ): Promise<WriteOutcome[]> {
    const guildId = caller.context.guild.id;
    for (const [entity, keys] of keysByEntity(writes)) await state.load(entity, keys);
    const now = this.clock.now();
    const outcomes: WriteOutcome[] = [];
    const recorded: SettingsRevisionEntity[] = [];
    let last = store === null ? 0 : await store.lastRevision();
    const memberOf = (userId: string): Promise<PermissionMember> =>
      this.callers.targetIn(state, caller.context, userId, members);
    for (const write of writes) {
      let planned: PlannedWrite;
      try {
        const current = await this.callers.inChange(state, caller);
        this.callers.require(current, write.permission);
        planned = await planWrite(state, current, write, memberOf, now);
      } catch (error) {
        outcomes.push(refusalOf(error));
        if (store) break;
        continue;
      }
      store?.add(write.setting, planned.effects);
      for (const effect of planned.effects) {
        state.put(write.setting.entity, effect.key, effect.type === 'delete' ? null : effect.row);
      }
      const revisions = planned.changes.map((change) =>
        revisionOf(guildId, ++last, write, author, now, change),
      );
      recorded.push(...revisions);
      outcomes.push({ ok: true, data: planned.data, revisions: store ? revisions : [] });
    }
    if (store && outcomes.every((outcome) => outcome.ok)) await store.finish(recorded);
    return outcomes;
  }

  /** Tells the event streams of a committed change (listeners run synchronously and must not throw). */
  private announce(guildId: string, revisions: readonly SettingsRevisionEntity[]): void {
    if (revisions.length === 0) return;
    this.events.emit(
      SettingsChangedEvent.event,
      new SettingsChangedEvent(guildId, revisions.map(summariseRevision)),
    );
  }

  /** The View answer as JSON, encoded. */
  private view(
    setting: RegisteredSetting,
    guildId: string,
    fields: unknown,
    cache: GuildSettingsCache,
  ): Promise<Buffer> {
    return cache.getEncoded(viewKey(setting, fields), async () => {
      const { limit, offset, ...filters } = fields as { limit?: number; offset?: number };
      const rows = await this.entries.findPage(setting, guildId, { filters, limit, offset });
      return JSON.stringify({ type: 'Ok', data: rows.map((row) => toApi(setting, row, 'client')) });
    });
  }
}
