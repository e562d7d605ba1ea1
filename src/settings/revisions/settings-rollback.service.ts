import { Injectable } from '@nestjs/common';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import type { RevisionDto } from 'src/settings/revisions/dto/revisions.dto';
import { rollbackPlan, type RollbackRevision } from 'src/settings/revisions/rollback-plan';
import { ChangeState } from 'src/settings/engine/change-state';
import type { SettingRow } from 'src/settings/schema/settings-definition';
import { stableJson, toApi } from 'src/settings/engine/settings-rows';
import { SettingsRegistry, type RegisteredSetting } from 'src/settings/schema/settings-registry';
import type { SettingsRevisionEntity } from 'src/settings/engine/settings-revision.entity';
import {
  SettingsRevisionsRepository,
  type RevisionHeader,
  type RevisionStates,
} from 'src/settings/revisions/settings-revisions.repository';
import { SettingsEntriesRepository } from 'src/settings/engine/settings-entries.repository';
import { HISTORY_PERMISSION, revisionDto } from 'src/settings/revisions/settings-revisions.service';
import { SettingsService } from 'src/settings/engine/settings.service';
import { type SettingsAuthor } from 'src/settings/engine/settings-author';

/**
 * One restore reads at most this many revisions (their key and number only; the states it puts
 * back are read for each entry's first and last revision alone).
 */
export const MAX_RESTORED_REVISIONS = 2_000;

/**
 * Undoing settings changes: one revision, or every revision of a setting after a given one. Each
 * entry is put back as it was, through the settings engine as if the caller made the change by
 * hand (the same permission, hierarchy, validation, reference and bot checks), all in one
 * transaction, each change recorded as a revision that names the one it undid. An entry changed
 * since is refused with the reason, and so is the whole rollback. A caller who may change nothing
 * in the setting is refused before any revision beyond the one named is read
 * (docs/request-costs.md).
 */
@Injectable()
export class SettingsRollbackService {
  constructor(
    private readonly registry: SettingsRegistry,
    private readonly settings: SettingsService,
    private readonly revisions: SettingsRevisionsRepository,
    private readonly entries: SettingsEntriesRepository,
  ) {}

  /** Undoes one revision. */
  async revert(guildId: string, author: SettingsAuthor, revision: number): Promise<RevisionDto[]> {
    const target = await this.revisionOf(guildId, author, revision);
    const setting = await this.writableSetting(guildId, author, target.setting);
    const [full] = await this.statesOf(guildId, [target]);
    return this.undo(guildId, author, setting, [full]);
  }

  /** Undoes every later revision of the revision's setting: the setting as that revision left it. */
  async restore(guildId: string, author: SettingsAuthor, revision: number): Promise<RevisionDto[]> {
    const target = await this.revisionOf(guildId, author, revision);
    const setting = await this.writableSetting(guildId, author, target.setting);
    // One more than allowed: whether there are too many, without counting them all.
    const later = await this.revisions.findLaterKeys(
      guildId,
      target.setting,
      revision,
      MAX_RESTORED_REVISIONS + 1,
    );
    if (later.length > MAX_RESTORED_REVISIONS) {
      throw new AppException(
        ErrorCode.BadRequest,
        `Over ${MAX_RESTORED_REVISIONS} revisions of ${target.setting} follow revision ${revision}; restore a later revision first`,
      );
    }
    return this.undo(guildId, author, setting, await this.statesOf(guildId, later));
  }

  /** The revision's number and setting, for a caller who may read the trail. */
  private async revisionOf(
    guildId: string,
    author: SettingsAuthor,
    revision: number,
  ): Promise<RevisionHeader> {
    (await this.settings.may(guildId, author)).require(HISTORY_PERMISSION);
    const found = await this.revisions.findHeader(guildId, revision);
    if (!found) throw new AppException(ErrorCode.NotFound, `No revision ${revision} in this guild`);
    return found;
  }

  /**
   * The declared setting, for a caller who may make at least one kind of change to it: anyone
   * else is refused before the revisions are read (the engine checks each change's own permission).
   */
  private async writableSetting(
    guildId: string,
    author: SettingsAuthor,
    settingId: string,
  ): Promise<RegisteredSetting> {
    const setting = this.registry.get(settingId);
    if (!setting) {
      throw new AppException(
        ErrorCode.BadRequest,
        `The setting ${settingId} is no longer declared: its revisions cannot be undone`,
      );
    }
    const writes = (['Create', 'Update', 'Delete'] as const).filter((operation) =>
      setting.schema.operations.includes(operation),
    );
    const may = await this.settings.may(guildId, author);
    if (!writes.some((operation) => may(`${settingId}.${operation.toLowerCase()}`))) {
      const needed = writes.map((operation) => `${settingId}.${operation.toLowerCase()}`);
      throw new AppException(
        ErrorCode.Restricted,
        `Undoing changes to ${settingId} changes it: you need ${needed.join(' or ')} in this guild`,
      );
    }
    return setting;
  }

  /**
   * The revisions with the states a rollback reads: `before` of each entry's first revision and
   * `after` of its last (the ones between are not read).
   */
  private async statesOf(
    guildId: string,
    revisions: readonly Pick<SettingsRevisionEntity, 'revision' | 'key'>[],
  ): Promise<RollbackRevision[]> {
    const firstAndLast = new Map<string, { first: number; last: number }>();
    for (const { revision, key } of revisions) {
      const entry = stableJson(key);
      const seen = firstAndLast.get(entry);
      firstAndLast.set(entry, { first: seen?.first ?? revision, last: revision });
    }
    const wanted = [...firstAndLast.values()].flatMap(({ first, last }) =>
      first === last ? [first] : [first, last],
    );
    const states = new Map<number, RevisionStates>();
    for (const row of await this.revisions.findStates(guildId, wanted))
      states.set(row.revision, row);
    return revisions.map(({ revision, key }) => ({
      revision,
      key,
      before: states.get(revision)?.before ?? null,
      after: states.get(revision)?.after ?? null,
    }));
  }

  private async undo(
    guildId: string,
    author: SettingsAuthor,
    setting: RegisteredSetting,
    revisions: readonly RollbackRevision[],
  ): Promise<RevisionDto[]> {
    const state = new ChangeState(this.entries, this.entries.manager, guildId, false);
    const keys = revisions.flatMap(({ key }) => (key === null ? [] : [key]));
    await state.load(setting.entity, keys);
    const current = new Map<string, SettingRow | null>();
    for (const key of keys) {
      const row = await state.row(setting.entity, key);
      current.set(stableJson(key), row ? toApi(setting, row, 'all') : null);
    }
    const plan = rollbackPlan(
      setting.schema,
      revisions,
      (key) => current.get(stableJson(key)) ?? null,
    );
    if (!plan.ok) {
      const details = plan.refusals.map((refusal) => ({
        field: refusal.key === null ? 'revision' : stableJson(refusal.key),
        message: refusal.reason,
      }));
      const message = `Cannot undo: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`;
      throw new AppException(ErrorCode.VersionConflict, message, details);
    }
    // The engine checks the versions again under the guild's lock: a change made meanwhile is a
    // VersionConflict there.
    const applied = await this.settings.executeAll(
      guildId,
      author,
      plan.operations.map((operation) => ({ setting: setting.schema.id, ...operation })),
    );
    return applied.flatMap((write) => write.revisions).map(revisionDto);
  }
}
