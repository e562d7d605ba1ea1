import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import type { SettingsEntriesRepository } from 'src/settings/engine/settings-entries.repository';
import { stableJson } from 'src/settings/engine/settings-rows';

/** Keys read in one statement: bounded so a large change never builds one huge query. */
const KEYS_PER_READ = 200;

interface Table {
  /** Entry key (JSON) → the row as the change sees it; null: absent. */
  rows: Map<string, ObjectLiteral | null>;
  /** Every row of the guild has been read. */
  complete: boolean;
  /** Raised by every `put`: what was derived from the table (permissions) is then stale. */
  changes: number;
}

/**
 * The stored rows one settings change reads and writes, as the change sees them: read from the
 * database once (the keys of all its writes to an entity in a few statements, not one per entry)
 * and then kept in memory with the change's own effects applied. A dry run plans against it
 * without writing anything; an applied change writes each effect to the database as well, in the
 * transaction that read the rows (docs/request-costs.md).
 */
export class ChangeState {
  private readonly tables = new Map<EntityTarget<ObjectLiteral>, Table>();

  constructor(
    private readonly entries: SettingsEntriesRepository,
    /** The change's transaction, or the data source's manager for a dry run. */
    private readonly manager: EntityManager,
    private readonly guildId: string,
    /** Read rows for update (an applied change, under the guild's settings lock). */
    private readonly forUpdate: boolean,
    /** Runs before each read of the database: effects held back are written first. */
    private readonly beforeRead: () => Promise<void> = () => Promise.resolve(),
  ) {}

  /** Reads the rows of `keys` not read yet. */
  async load(
    entity: EntityTarget<ObjectLiteral>,
    keys: readonly Record<string, unknown>[],
  ): Promise<void> {
    const table = this.table(entity);
    if (table.complete) return;
    const wanted = new Map<string, Record<string, unknown>>();
    for (const key of keys) {
      const id = stableJson(key);
      if (!table.rows.has(id)) wanted.set(id, key);
    }
    const pending = [...wanted.entries()];
    if (pending.length > 0) await this.beforeRead();
    for (let i = 0; i < pending.length; i += KEYS_PER_READ) {
      const chunk = pending.slice(i, i + KEYS_PER_READ);
      const found = await this.entries.findByKeys(
        this.manager,
        entity,
        this.guildId,
        chunk.map(([, key]) => key),
        { forUpdate: this.forUpdate },
      );
      const byKey = new Map(found.map((row) => [this.keyOf(entity, row), row]));
      for (const [id] of chunk) table.rows.set(id, byKey.get(id) ?? null);
    }
  }

  /** The row of `key` as the change sees it (null: absent), reading it if needed. */
  async row(
    entity: EntityTarget<ObjectLiteral>,
    key: Record<string, unknown>,
  ): Promise<ObjectLiteral | null> {
    await this.load(entity, [key]);
    return this.table(entity).rows.get(stableJson(key)) ?? null;
  }

  /** Every row of the guild in `entity` as the change sees it. */
  async all<T extends ObjectLiteral>(entity: EntityTarget<T>): Promise<T[]> {
    const table = this.table(entity);
    if (!table.complete) {
      await this.beforeRead();
      const stored = await this.entries.findAllOfGuild(this.manager, entity, this.guildId);
      for (const row of stored) {
        const id = this.keyOf(entity, row);
        // A row already read (or written) by the change stays as the change sees it.
        if (!table.rows.has(id)) table.rows.set(id, row);
      }
      table.complete = true;
    }
    return [...table.rows.values()].filter((row): row is T => row !== null);
  }

  /** Records the change's effect on `key` (null: deleted). */
  put(
    entity: EntityTarget<ObjectLiteral>,
    key: Record<string, unknown>,
    row: ObjectLiteral | null,
  ): void {
    const table = this.table(entity);
    table.rows.set(stableJson(key), row);
    table.changes++;
  }

  /** How many effects the change has recorded in `entity` (what depends on it is then stale). */
  changesIn(entity: EntityTarget<ObjectLiteral>): number {
    return this.tables.get(entity)?.changes ?? 0;
  }

  /** The entity's row version column, if it keeps one. */
  versionColumnOf(entity: EntityTarget<ObjectLiteral>): string | undefined {
    return this.entries.versionColumnOf(entity);
  }

  private table(entity: EntityTarget<ObjectLiteral>): Table {
    let table = this.tables.get(entity);
    if (!table) {
      table = { rows: new Map(), complete: false, changes: 0 };
      this.tables.set(entity, table);
    }
    return table;
  }

  /** A stored row's entry key: its primary key without the guild, as the settings engine keys it. */
  private keyOf(entity: EntityTarget<ObjectLiteral>, row: ObjectLiteral): string {
    const columns = this.entries.keyPropertiesOf(entity);
    return stableJson(Object.fromEntries(columns.map((name) => [name, row[name]])));
  }
}
