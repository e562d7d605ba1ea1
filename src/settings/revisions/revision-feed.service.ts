import { Injectable } from '@nestjs/common';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { SettingsRegistry } from 'src/settings/schema/settings-registry';
import { SettingsRevisionsRepository } from 'src/settings/revisions/settings-revisions.repository';
import type { RevisionSummary } from 'src/settings/engine/settings.events';
import { SettingsService } from 'src/settings/engine/settings.service';

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
    private readonly revisions: SettingsRevisionsRepository,
  ) {}

  /**
   * The settings whose changes the caller may see in the guild now (their View permission, a
   * token's scope applied). 404 for a guild the bot is not in, as for the settings themselves.
   */
  async viewer(guildId: string, session: AuthenticatedSession): Promise<SettingViewTest> {
    const may = await this.settings.may(guildId, session);
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
  after(guildId: string, revision: number, limit: number): Promise<RevisionSummary[]> {
    return this.revisions.findSummariesAfter(guildId, revision, limit);
  }

  /** A summary as clients see it: columns hidden on View are not named among those changed. */
  forClients(summary: RevisionSummary): RevisionSummary {
    const hidden = this.hiddenColumns(summary.setting);
    if (hidden.size === 0) return summary;
    return { ...summary, changed: summary.changed.filter((column) => !hidden.has(column)) };
  }

  /** The guild's newest revision number (0 before its first change). */
  latest(guildId: string): Promise<number> {
    return this.revisions.findLatestNumber(guildId);
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
