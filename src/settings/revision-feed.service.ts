import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { SettingsRegistry } from 'src/settings/settings-registry';
import { SettingsRevisionEntity } from 'src/settings/settings-revision.entity';
import type { RevisionSummary } from 'src/settings/settings.events';
import { authorOf, SettingsService } from 'src/settings/settings.service';

/** Which settings' changes a caller may be told of: those whose View they hold. */
export type SettingViewTest = (setting: string) => boolean;

/**
 * A guild's revisions as a feed of changes for event streams: who may follow it, what came after a
 * given revision (to resume a stream without a gap), and where it stands.
 */
@Injectable()
export class RevisionFeed {
  /** Columns hidden on View, per setting: a schema never changes once the registry is built. */
  private readonly hidden = new Map<string, ReadonlySet<string>>();

  constructor(
    private readonly settings: SettingsService,
    private readonly registry: SettingsRegistry,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /**
   * The settings whose changes the caller may see in the guild now (their View permission, a
   * token's scope applied). 404 for a guild the bot is not in, as for the settings themselves.
   */
  async viewer(guildId: string, session: AuthenticatedSession): Promise<SettingViewTest> {
    const may = await this.settings.may(guildId, authorOf(session));
    return (setting) => may(`${setting}.view`);
  }

  /** Refuses (403 `Restricted`) a caller who may view none of the guild's settings. */
  async requireFollower(guildId: string, session: AuthenticatedSession): Promise<void> {
    const views = await this.viewer(guildId, session);
    if (this.registry.all().some((setting) => views(setting.schema.id))) return;
    throw new AppException(
      ErrorCode.Restricted,
      "You need the View permission of at least one of this guild's settings to follow its changes",
    );
  }

  /**
   * The guild's revisions after `revision`, oldest first, at most `limit`: what a summary holds
   * and no more (the names of the changed columns are read from the diff in the database, not
   * the diff itself, nor the entries before and after).
   */
  async after(guildId: string, revision: number, limit: number): Promise<RevisionSummary[]> {
    const rows = await this.dataSource
      .getRepository(SettingsRevisionEntity)
      .createQueryBuilder('r')
      .select([
        'r.revision AS revision',
        'r.setting AS setting',
        'r.key AS key',
        'r.operation AS operation',
        'r.user_id AS user_id',
        'r.session_type AS session_type',
        'r.reverts AS reverts',
        'r.created_at AS created_at',
      ])
      .addSelect(
        "CASE WHEN jsonb_typeof(r.diff) = 'object' THEN ARRAY(SELECT jsonb_object_keys(r.diff)) ELSE ARRAY[]::text[] END",
        'changed',
      )
      .where('r.guild_id = :guildId AND r.revision > :revision', { guildId, revision })
      .orderBy('r.revision', 'ASC')
      .limit(limit)
      .getRawMany<Omit<RevisionSummary, 'created_at'> & { created_at: Date }>();
    return rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() }));
  }

  /** A summary as clients see it: columns hidden on View are not named among those changed. */
  forClients(summary: RevisionSummary): RevisionSummary {
    const hidden = this.hiddenColumns(summary.setting);
    if (hidden.size === 0) return summary;
    return { ...summary, changed: summary.changed.filter((column) => !hidden.has(column)) };
  }

  /** The guild's newest revision number (0 before its first change). */
  async latest(guildId: string): Promise<number> {
    const newest = await this.dataSource
      .getRepository(SettingsRevisionEntity)
      .maximum('revision', { guild_id: guildId });
    return newest ?? 0;
  }

  private hiddenColumns(settingId: string): ReadonlySet<string> {
    let hidden = this.hidden.get(settingId);
    if (!hidden) {
      const columns = this.registry.get(settingId)?.schema.columns ?? [];
      hidden = new Set(
        columns.filter((column) => column.hidden.includes('View')).map((column) => column.id),
      );
      this.hidden.set(settingId, hidden);
    }
    return hidden;
  }
}
