import { Injectable } from '@nestjs/common';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { fetchPage } from 'src/common/paging/page';
import {
  DEFAULT_REVISIONS_PAGE,
  parseJsonObject,
  type ListRevisionsQueryDto,
  type RevisionDto,
  type RevisionPageDto,
} from 'src/settings/revisions/dto/revisions.dto';
import type { SettingsRevisionEntity } from 'src/settings/engine/settings-revision.entity';
import { SettingsRevisionsRepository } from 'src/settings/revisions/settings-revisions.repository';
import { SettingsService } from 'src/settings/engine/settings.service';
import { type SettingsAuthor } from 'src/settings/engine/settings-author';

/** Who may read a guild's settings revisions. */
export const HISTORY_PERMISSION = 'settings_history.view';

/**
 * A guild's settings revisions as a queryable trail: filters on the setting, the entry, the author,
 * the session, the operation and a time range, newest first, paged by revision number (a cursor
 * that stays valid however many revisions are added meanwhile).
 */
@Injectable()
export class SettingsRevisionsService {
  constructor(
    private readonly settings: SettingsService,
    private readonly revisions: SettingsRevisionsRepository,
  ) {}

  async list(
    guildId: string,
    author: SettingsAuthor,
    query: ListRevisionsQueryDto,
  ): Promise<RevisionPageDto> {
    if (query.key !== undefined && query.setting === undefined) {
      const message = 'key needs setting: a primary key names an entry of one setting';
      throw new AppException(ErrorCode.BadRequest, message, [{ field: 'key', message }]);
    }
    (await this.settings.may(guildId, author)).require(HISTORY_PERMISSION);
    const filters = {
      setting: query.setting,
      // jsonb equality: the same key whatever the order of its columns.
      keyJson: query.key === undefined ? undefined : JSON.stringify(parseJsonObject(query.key)),
      author: query.author,
      sessionId: query.session_id,
      operation: query.operation,
      since: query.since === undefined ? undefined : new Date(query.since),
      until: query.until === undefined ? undefined : new Date(query.until),
    };
    const page = await fetchPage(
      query,
      DEFAULT_REVISIONS_PAGE,
      ({ before, take }) => this.revisions.findPage(guildId, { ...filters, before }, take),
      (row) => row.revision,
    );
    return { revisions: page.rows.map(revisionDto), next_cursor: page.nextCursor };
  }
}

export function revisionDto(row: SettingsRevisionEntity): RevisionDto {
  return {
    revision: row.revision,
    setting: row.setting,
    key: row.key,
    operation: row.operation,
    before: row.before,
    after: row.after,
    diff: row.diff,
    user_id: row.user_id,
    session_id: row.session_id,
    session_type: row.session_type,
    reverts: row.reverts,
    created_at: row.created_at.toISOString(),
  };
}
