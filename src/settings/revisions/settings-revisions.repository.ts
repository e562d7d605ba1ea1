import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, MoreThan, type Repository } from 'typeorm';
import { SettingsRevisionEntity } from 'src/settings/engine/settings-revision.entity';
import type { RevisionSummary } from 'src/settings/engine/settings.events';

/** Revisions whose stored states are read in one statement. */
const STATES_PER_READ = 500;

/** What `findPage` filters on: each set field narrows the page. */
export interface RevisionFilters {
  setting?: string;
  /** An entry's key, as JSON: equal as jsonb, whatever the order of its columns. */
  keyJson?: string;
  author?: string;
  sessionId?: string;
  operation?: string;
  since?: Date;
  until?: Date;
  /** Only revisions older than this one (the page after a cursor). */
  before?: number;
}

/** Each filter's condition, its value bound by the filter's name. */
const FILTER_CONDITIONS: Readonly<Record<keyof RevisionFilters, string>> = {
  setting: 'r.setting = :setting',
  keyJson: 'r.key = CAST(:keyJson AS jsonb)',
  author: 'r.user_id = :author',
  sessionId: 'r.session_id = :sessionId',
  operation: 'r.operation = :operation',
  since: 'r.created_at >= :since',
  until: 'r.created_at < :until',
  before: 'r.revision < :before',
};

/** A revision's number, setting and entry key: what a rollback reads before any state. */
export type RevisionHeader = Pick<SettingsRevisionEntity, 'revision' | 'setting' | 'key'>;

/** A revision's states: the entry before and after it. */
export type RevisionStates = Pick<SettingsRevisionEntity, 'revision' | 'before' | 'after'>;

/**
 * The guild's revisions, read for the trail, rollbacks and event streams (the engine records them:
 * SettingsEntriesRepository). Every read is scoped to one guild and reads only what its caller uses.
 */
@Injectable()
export class SettingsRevisionsRepository {
  private readonly revisions: Repository<SettingsRevisionEntity>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.revisions = dataSource.getRepository(SettingsRevisionEntity);
  }

  /** The newest revisions matching `filters`, newest first, at most `limit`. */
  findPage(
    guildId: string,
    filters: RevisionFilters,
    limit: number,
  ): Promise<SettingsRevisionEntity[]> {
    const select = this.revisions
      .createQueryBuilder('r')
      .where('r.guild_id = :guildId', { guildId });
    // Each value bound as its own parameter: nothing in the query can stand in for :guildId.
    for (const [name, condition] of Object.entries(FILTER_CONDITIONS)) {
      const value = filters[name as keyof RevisionFilters];
      if (value !== undefined) select.andWhere(condition, { [name]: value });
    }
    return select.orderBy('r.revision', 'DESC').limit(limit).getMany();
  }

  /** One revision's number, setting and key; null when the guild has no such revision. */
  findHeader(guildId: string, revision: number): Promise<RevisionHeader | null> {
    return this.revisions.findOne({
      select: { revision: true, setting: true, key: true },
      where: { guild_id: guildId, revision },
    });
  }

  /** The number and key of a setting's revisions after `revision`, oldest first, at most `limit`. */
  findLaterKeys(
    guildId: string,
    setting: string,
    revision: number,
    limit: number,
  ): Promise<Pick<SettingsRevisionEntity, 'revision' | 'key'>[]> {
    return this.revisions.find({
      select: { revision: true, key: true },
      where: { guild_id: guildId, setting, revision: MoreThan(revision) },
      order: { revision: 'ASC' },
      take: limit,
    });
  }

  /** The states of the given revisions, STATES_PER_READ per statement. */
  async findStates(guildId: string, revisions: readonly number[]): Promise<RevisionStates[]> {
    const states: RevisionStates[] = [];
    for (let i = 0; i < revisions.length; i += STATES_PER_READ) {
      states.push(
        ...(await this.revisions.find({
          select: { revision: true, before: true, after: true },
          where: { guild_id: guildId, revision: In(revisions.slice(i, i + STATES_PER_READ)) },
        })),
      );
    }
    return states;
  }

  /**
   * The guild's revisions after `revision`, oldest first, at most `limit`, as event summaries: the
   * names of the changed columns are read from the diff in the database, not the diff itself,
   * nor the entries before and after.
   */
  async findSummariesAfter(
    guildId: string,
    revision: number,
    limit: number,
  ): Promise<RevisionSummary[]> {
    const rows = await this.revisions
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

  /** The guild's newest revision number (0 before its first change). */
  async findLatestNumber(guildId: string): Promise<number> {
    return (await this.revisions.maximum('revision', { guild_id: guildId })) ?? 0;
  }
}
