import type { EntityManager, ObjectLiteral } from 'typeorm';
import { alreadyExists, type Effect } from 'src/settings/engine/change-plan';
import {
  ROWS_PER_INSERT,
  type SettingsEntriesRepository,
} from 'src/settings/engine/settings-entries.repository';
import { stableJson } from 'src/settings/engine/settings-rows';
import type { SettingsRevisionEntity } from 'src/settings/engine/settings-revision.entity';
import type { RegisteredSetting } from 'src/settings/schema/settings-registry';

/**
 * The effects of an applied change, held back and written in order when the change ends (or
 * before it reads the database again): consecutive effects of one kind on one table go in one
 * statement.
 */
export class EffectWriter {
  private readonly pending: { setting: RegisteredSetting; effect: Effect }[] = [];

  constructor(
    private readonly entries: SettingsEntriesRepository,
    /** The change's transaction. */
    private readonly manager: EntityManager,
    private readonly guildId: string,
  ) {}

  add(setting: RegisteredSetting, effects: readonly Effect[]): void {
    for (const effect of effects) this.pending.push({ setting, effect });
  }

  /** The guild's last revision number. */
  lastRevision(): Promise<number> {
    return this.entries.lastRevision(this.manager, this.guildId);
  }

  /** Writes what is held back, then the change's revisions. */
  async finish(revisions: readonly SettingsRevisionEntity[]): Promise<void> {
    await this.flush();
    await this.entries.insertRevisions(this.manager, revisions);
  }

  /**
   * Writes what is held back, in order: consecutive effects of one kind on one table, each entry
   * once, go in one statement (an insert, an upsert of the whole rows, a delete).
   */
  async flush(): Promise<void> {
    const pending = this.pending.splice(0);
    for (let i = 0; i < pending.length;) {
      const { setting, effect } = pending[i];
      const group: Effect[] = [];
      const keys = new Set<string>();
      for (
        ;
        i < pending.length &&
        pending[i].setting === setting &&
        pending[i].effect.type === effect.type &&
        !keys.has(stableJson(pending[i].effect.key)) &&
        group.length < ROWS_PER_INSERT;
        i++
      ) {
        keys.add(stableJson(pending[i].effect.key));
        group.push(pending[i].effect);
      }
      await this.write(setting, group);
    }
  }

  /** One statement for effects of one kind on one table, on distinct entries. */
  private async write(setting: RegisteredSetting, effects: readonly Effect[]): Promise<void> {
    const rows: ObjectLiteral[] = effects.flatMap((effect) =>
      effect.type === 'delete' ? [] : [{ ...effect.row }],
    );
    switch (effects[0].type) {
      case 'insert':
        await this.entries.insertNew(this.manager, setting.entity, rows, () =>
          alreadyExists(setting, effects[0].key),
        );
        break;
      case 'update':
        // The rows exist (read for update under the guild's lock): the whole row is written,
        // its version raised by the plan.
        await this.entries.replaceWhole(this.manager, setting.entity, rows);
        break;
      case 'delete':
        await this.entries.deleteByKeys(
          this.manager,
          setting.entity,
          this.guildId,
          effects.map((effect) => effect.key),
        );
        break;
    }
  }
}
