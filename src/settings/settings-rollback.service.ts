import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MoreThan } from 'typeorm';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import type { RevisionDto } from 'src/settings/dto/revisions.dto';
import { rollbackPlan } from 'src/settings/rollback-plan';
import type { SettingRow } from 'src/settings/setting-definition';
import { stableJson, toApi } from 'src/settings/setting-rows';
import { SettingsRegistry } from 'src/settings/settings-registry';
import { SettingsRevisionEntity } from 'src/settings/settings-revision.entity';
import { HISTORY_PERMISSION, revisionDto } from 'src/settings/settings-revisions.service';
import { SettingsService, type SettingsAuthor } from 'src/settings/settings.service';

/** One restore undoes at most this many revisions (one transaction holds the guild's lock). */
export const MAX_RESTORED_REVISIONS = 2_000;

/**
 * Undoing settings changes: one revision, or every revision of a setting after a given one. Each
 * entry is put back as it was, through the settings engine as if the caller made the change by
 * hand (the same permission, hierarchy, validation, reference and bot checks), all in one
 * transaction, each change recorded as a revision that names the one it undid. An entry changed
 * since is refused with the reason, and so is the whole rollback.
 */
@Injectable()
export class SettingsRollbackService {
  constructor(
    private readonly registry: SettingsRegistry,
    private readonly settings: SettingsService,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** Undoes one revision. */
  async revert(guildId: string, author: SettingsAuthor, revision: number): Promise<RevisionDto[]> {
    const target = await this.revisionOf(guildId, author, revision);
    return this.undo(guildId, author, target.setting, [target]);
  }

  /** Undoes every later revision of the revision's setting: the setting as that revision left it. */
  async restore(guildId: string, author: SettingsAuthor, revision: number): Promise<RevisionDto[]> {
    const target = await this.revisionOf(guildId, author, revision);
    const later = await this.dataSource.getRepository(SettingsRevisionEntity).find({
      where: { guild_id: guildId, setting: target.setting, revision: MoreThan(revision) },
      order: { revision: 'ASC' },
      // One more than allowed: whether there are too many, without counting them all.
      take: MAX_RESTORED_REVISIONS + 1,
    });
    if (later.length > MAX_RESTORED_REVISIONS) {
      throw new AppException(
        ErrorCode.BadRequest,
        `Over ${MAX_RESTORED_REVISIONS} revisions of ${target.setting} follow revision ${revision}; restore a later revision first`,
      );
    }
    return this.undo(guildId, author, target.setting, later);
  }

  /** The revision, for a caller who may read the trail. */
  private async revisionOf(
    guildId: string,
    author: SettingsAuthor,
    revision: number,
  ): Promise<SettingsRevisionEntity> {
    await this.settings.requirePermissionIn(guildId, author, HISTORY_PERMISSION);
    const found = await this.dataSource
      .getRepository(SettingsRevisionEntity)
      .findOneBy({ guild_id: guildId, revision });
    if (!found) throw new AppException(ErrorCode.NotFound, `No revision ${revision} in this guild`);
    return found;
  }

  private async undo(
    guildId: string,
    author: SettingsAuthor,
    settingId: string,
    revisions: readonly SettingsRevisionEntity[],
  ): Promise<RevisionDto[]> {
    const setting = this.registry.get(settingId);
    if (!setting) {
      throw new AppException(
        ErrorCode.BadRequest,
        `The setting ${settingId} is no longer declared: its revisions cannot be undone`,
      );
    }
    const current = new Map<string, SettingRow | null>();
    const repository = this.dataSource.getRepository(setting.entity);
    for (const { key } of revisions) {
      if (key === null || current.has(stableJson(key))) continue;
      const row = await repository.findOneBy({ ...key, guild_id: guildId });
      current.set(stableJson(key), row ? toApi(setting, row, false) : null);
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
      plan.operations.map((operation) => ({ setting: settingId, ...operation })),
    );
    return applied.flatMap((write) => write.revisions).map(revisionDto);
  }
}
