import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import {
  DEFAULT_REVISIONS_PAGE,
  parseJsonObject,
  type ListRevisionsQueryDto,
  type RevisionDto,
  type RevisionPageDto,
} from 'src/settings/dto/revisions.dto';
import { SettingsRevisionEntity } from 'src/settings/settings-revision.entity';
import { SettingsService, type SettingsAuthor } from 'src/settings/settings.service';

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
    @InjectDataSource() private readonly dataSource: DataSource,
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
    const limit = query.limit === undefined ? DEFAULT_REVISIONS_PAGE : Number(query.limit);
    const select = this.dataSource
      .getRepository(SettingsRevisionEntity)
      .createQueryBuilder('r')
      .where('r.guild_id = :guildId', { guildId });
    // Each parameter bound on its own: nothing in the query can stand in for :guildId.
    if (query.setting !== undefined) {
      select.andWhere('r.setting = :setting', { setting: query.setting });
    }
    if (query.key !== undefined) {
      // jsonb equality: the same key whatever the order of its columns.
      select.andWhere('r.key = CAST(:key AS jsonb)', {
        key: JSON.stringify(parseJsonObject(query.key)),
      });
    }
    if (query.author !== undefined) {
      select.andWhere('r.user_id = :author', { author: query.author });
    }
    if (query.session_id !== undefined) {
      select.andWhere('r.session_id = :sessionId', { sessionId: query.session_id });
    }
    if (query.operation !== undefined) {
      select.andWhere('r.operation = :operation', { operation: query.operation });
    }
    if (query.since !== undefined) {
      select.andWhere('r.created_at >= :since', { since: new Date(query.since) });
    }
    if (query.until !== undefined) {
      select.andWhere('r.created_at < :until', { until: new Date(query.until) });
    }
    if (query.cursor !== undefined) {
      select.andWhere('r.revision < :cursor', { cursor: Number(query.cursor) });
    }
    // One more than the page: whether an older page exists, without counting.
    const rows = await select
      .orderBy('r.revision', 'DESC')
      .limit(limit + 1)
      .getMany();
    const page = rows.slice(0, limit);
    return {
      revisions: page.map(revisionDto),
      next_cursor: rows.length > limit ? String(page[page.length - 1].revision) : null,
    };
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
