import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { isUniqueViolation } from 'src/common/errors/database-errors';
import { SettingsRevisionEntity } from 'src/settings/engine/settings-revision.entity';
import { defaultOrder, viewFilters } from 'src/settings/engine/settings-rows';
import type { RegisteredSetting } from 'src/settings/schema/settings-registry';
import { MAX_VIEW_LIMIT } from 'src/settings/schema/validation-schema';

/** Rows (entries or revisions) stored in one statement. */
export const ROWS_PER_INSERT = 500;

/** An entry's key: its primary key without the guild, as the settings engine keys entries. */
export type EntryKey = Record<string, unknown>;

/** A View's query: the setting's filters on its columns, and the page. */
export interface EntryQuery {
  filters: Record<string, unknown>;
  limit?: number;
  offset?: number;
}

/**
 * Where the settings engine reads and writes the guild's entries and records its revisions
 * (docs/settings-engine.md). A change passes the transaction's `manager`; reads outside one use
 * the data source's. Every read and write is scoped to one guild.
 */
@Injectable()
export class SettingsEntriesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The data source's manager: for reads that are not part of a change. */
  get manager(): EntityManager {
    return this.dataSource.manager;
  }

  /** One page of a setting's entries in the guild, in the setting's order (a View). */
  findPage(
    setting: RegisteredSetting,
    guildId: string,
    query: EntryQuery,
  ): Promise<ObjectLiteral[]> {
    return this.dataSource.getRepository<ObjectLiteral>(setting.entity).find({
      // The guild last: no filter can replace it (column ids are also checked at boot).
      where: { ...viewFilters(setting, query.filters), guild_id: guildId },
      order: setting.order ?? defaultOrder(setting),
      take: query.limit ?? MAX_VIEW_LIMIT,
      skip: query.offset ?? 0,
    });
  }

  /** Every entry of a setting in the guild, in the setting's order (an export). */
  findAllInOrder(setting: RegisteredSetting, guildId: string): Promise<ObjectLiteral[]> {
    return this.dataSource.getRepository<ObjectLiteral>(setting.entity).find({
      where: { guild_id: guildId },
      order: setting.order ?? defaultOrder(setting),
    });
  }

  /** The guild's entries of `keys`, locked for update when a change will write them. */
  findByKeys(
    manager: EntityManager,
    entity: EntityTarget<ObjectLiteral>,
    guildId: string,
    keys: readonly EntryKey[],
    { forUpdate }: { forUpdate: boolean },
  ): Promise<ObjectLiteral[]> {
    return manager.getRepository(entity).find({
      where: keys.map((key) => ({ ...key, guild_id: guildId })),
      ...(forUpdate && { lock: { mode: 'pessimistic_write' as const } }),
    });
  }

  /** Every entry of the guild in `entity`. */
  findAllOfGuild<T extends ObjectLiteral>(
    manager: EntityManager,
    entity: EntityTarget<T>,
    guildId: string,
  ): Promise<T[]> {
    return manager.getRepository(entity).find({ where: { guild_id: guildId } as never });
  }

  /** The properties of an entry's key in `entity` (its primary key without the guild). */
  keyPropertiesOf(entity: EntityTarget<ObjectLiteral>): string[] {
    return this.dataSource
      .getMetadata(entity)
      .primaryColumns.map((column) => column.propertyName)
      .filter((name) => name !== 'guild_id');
  }

  /** The entity's row version column, if it keeps one. */
  versionColumnOf(entity: EntityTarget<ObjectLiteral>): string | undefined {
    return this.dataSource.getMetadata(entity).versionColumn?.propertyName;
  }

  /**
   * Inserts new entries, never `save` (which would turn an entry created meanwhile into an
   * update); a unique violation (a writer that does not take the guild's lock inserted a key
   * first) is answered with `exists()`.
   */
  async insertNew(
    manager: EntityManager,
    entity: EntityTarget<ObjectLiteral>,
    rows: ObjectLiteral[],
    exists: () => Error,
  ): Promise<void> {
    try {
      await manager.getRepository(entity).insert(rows);
    } catch (error) {
      throw isUniqueViolation(error) ? exists() : error;
    }
  }

  /** Writes existing entries whole (their version raised by the caller), in one statement. */
  async replaceWhole(
    manager: EntityManager,
    entity: EntityTarget<ObjectLiteral>,
    rows: ObjectLiteral[],
  ): Promise<void> {
    const repository = manager.getRepository(entity);
    const conflictPaths = repository.metadata.primaryColumns.map((column) => column.propertyName);
    await repository.upsert(rows, { conflictPaths, skipUpdateIfNoValuesChanged: false });
  }

  /** Deletes the guild's entries of `keys`, in one statement. */
  async deleteByKeys(
    manager: EntityManager,
    entity: EntityTarget<ObjectLiteral>,
    guildId: string,
    keys: readonly EntryKey[],
  ): Promise<void> {
    await manager
      .getRepository(entity)
      .createQueryBuilder()
      .delete()
      .where(keys.map((key) => ({ ...key, guild_id: guildId })))
      .execute();
  }

  /** The guild's last revision number (0 before its first change). */
  async lastRevision(manager: EntityManager, guildId: string): Promise<number> {
    const repository = manager.getRepository<ObjectLiteral>(SettingsRevisionEntity);
    return (await repository.maximum('revision', { guild_id: guildId })) ?? 0;
  }

  /** Records a change's revisions, ROWS_PER_INSERT per statement. */
  async insertRevisions(
    manager: EntityManager,
    revisions: readonly SettingsRevisionEntity[],
  ): Promise<void> {
    const repository = manager.getRepository<ObjectLiteral>(SettingsRevisionEntity);
    for (let i = 0; i < revisions.length; i += ROWS_PER_INSERT) {
      await repository.insert(revisions.slice(i, i + ROWS_PER_INSERT));
    }
  }
}
