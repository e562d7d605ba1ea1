import { Injectable } from '@nestjs/common';
import { AppException, type ErrorDetail } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { Clock } from 'src/common/time/clock';
import { GuildAccessService } from 'src/guilds/guild-access.service';
import type {
  IdMappingDto,
  ImportReportDto,
  ImportSettingsDto,
  SettingImportDto,
  SettingsExportDto,
} from 'src/settings/transfer/dto/transfer.dto';
import type { SettingRow } from 'src/settings/schema/settings-definition';
import { SettingsEntriesRepository } from 'src/settings/engine/settings-entries.repository';
import { keyOf, stableJson, toApi, type RowColumns } from 'src/settings/engine/settings-rows';
import { RevisionFeed } from 'src/settings/revisions/revision-feed.service';
import { SettingsRegistry, type RegisteredSetting } from 'src/settings/schema/settings-registry';
import { revisionDto } from 'src/settings/revisions/settings-revisions.service';
import { MAX_CHANGE_ENTRIES } from 'src/settings/engine/change-plan';
import { SettingsService, type WriteOutcome } from 'src/settings/engine/settings.service';
import { type SettingsAuthor } from 'src/settings/engine/settings-author';
import { type SettingsRequest } from 'src/settings/engine/settings-checks';
import {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  exportedRow,
  columnsNotIn,
  importPlan,
  mapIds,
  referencedIds,
} from 'src/settings/transfer/transfer-plan';

/** One import changes at most this many entries (each checked, some with a platform lookup). */
export const MAX_IMPORT_ENTRIES = 2_000;

/** One write of an import, with what the report says about it. */
interface PlannedWrite {
  setting: string;
  key: Record<string, unknown>;
  request: SettingsRequest & { operation: 'Create' | 'Update' | 'Delete' };
}

/**
 * A guild's configuration as one document, and back: export writes every setting the caller may
 * view; import makes this guild's settings equal to a document's, under the caller's permissions,
 * as one transaction with revisions, or reports (dry run) exactly what it would do.
 */
@Injectable()
export class SettingsTransferService {
  constructor(
    private readonly registry: SettingsRegistry,
    private readonly settings: SettingsService,
    private readonly guilds: GuildAccessService,
    private readonly clock: Clock,
    private readonly feed: RevisionFeed,
    private readonly entries: SettingsEntriesRepository,
  ) {}

  /** The guild's owner, who holds every permission in it (the CLI's default author). */
  async ownerOf(guildId: string): Promise<string> {
    return (await this.guilds.guildContext(guildId)).guild.owner_id;
  }

  /** Every configuration setting (one that offers Create) the caller holds `<setting>.view` in. */
  async export(guildId: string, author: SettingsAuthor): Promise<SettingsExportDto> {
    const may = await this.settings.may(guildId, author);
    const exported: Record<string, SettingRow[]> = {};
    for (const setting of this.transferable()) {
      if (!may(`${setting.schema.id}.view`)) continue;
      const rows = await this.rowsOf(setting, guildId, 'client');
      exported[setting.schema.id] = rows.map((row) => exportedRow(setting.schema, row));
    }
    if (Object.keys(exported).length === 0) {
      throw new AppException(
        ErrorCode.Restricted,
        'You may view none of this guild’s settings: there is nothing to export',
      );
    }
    const revision = await this.feed.latest(guildId);
    return {
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      guild_id: guildId,
      exported_at: this.clock.now().toISOString(),
      revision,
      settings: exported,
    };
  }

  /**
   * Makes each setting the document lists equal to it (settings it does not list are left alone):
   * entries only in the document are created, entries only here deleted, the others updated where
   * they differ. Every write is checked as a change by hand; the import applies all of them in one
   * transaction, or, if any is refused, none (400, the refusals in `details`).
   */
  async import(
    guildId: string,
    author: SettingsAuthor,
    body: ImportSettingsDto,
  ): Promise<ImportReportDto> {
    const dryRun = body.dry_run ?? true;
    const mapping: IdMappingDto = body.mapping ?? {};
    const entries = Object.values(body.document.settings).reduce((n, rows) => n + rows.length, 0);
    if (entries > MAX_IMPORT_ENTRIES) {
      const message = `The document holds ${entries} entries; one import takes at most ${MAX_IMPORT_ENTRIES}`;
      throw new AppException(ErrorCode.BadRequest, message, [
        { field: 'document.settings', message },
      ]);
    }
    const context = await this.guilds.guildContext(guildId, author.userId);
    const may = await this.settings.may(guildId, author);
    const report: Record<string, SettingImportDto> = {};
    const unknown = { roles: new Set<string>(), channels: new Set<string>() };
    const writes: PlannedWrite[] = [];
    for (const [settingId, rows] of Object.entries(body.document.settings)) {
      const entry: SettingImportDto = {
        created: [],
        updated: [],
        deleted: [],
        unchanged: [],
        refused: [],
      };
      report[settingId] = entry;
      const setting = this.registry.get(settingId);
      if (!setting || !this.transferable().includes(setting)) {
        entry.refused.push({
          key: {},
          operation: null,
          reasons: [`${settingId} is not a setting this service can import`],
        });
        continue;
      }
      // Nothing of a setting the caller may not read is compared, listed or changed.
      if (!may(`${settingId}.view`)) {
        entry.refused.push({
          key: {},
          operation: null,
          reasons: [`You need the permission ${settingId}.view in this guild to import it`],
        });
        continue;
      }
      const known = rows.filter((row) => {
        const unknownColumns = columnsNotIn(setting.schema, row);
        if (unknownColumns.length === 0) return true;
        entry.refused.push({
          key: keyOf(setting, row),
          operation: null,
          reasons: [`${settingId} has no column ${unknownColumns.join(', ')}`],
        });
        return false;
      });
      const wanted = known.map((row) =>
        exportedRow(setting.schema, mapIds(setting.schema, row, mapping)),
      );
      const referenced = referencedIds(setting.schema, wanted);
      for (const id of referenced.roles) if (!context.role(id)) unknown.roles.add(id);
      for (const id of referenced.channels) if (!context.channel(id)) unknown.channels.add(id);
      // As the export reads them, so that an export imported back compares equal.
      const plan = importPlan(
        setting.schema,
        wanted,
        await this.rowsOf(setting, guildId, 'client'),
      );
      entry.unchanged = plan.unchanged;
      entry.refused.push(
        ...plan.refused.map(({ key, reason }) => ({ key, operation: null, reasons: [reason] })),
      );
      // Deletes first, so that an entry's key can move; then updates, then creates.
      for (const { key, fields } of plan.deleted) {
        writes.push({
          setting: settingId,
          key,
          request: { setting: settingId, operation: 'Delete', fields },
        });
      }
      for (const { key, fields } of plan.updated) {
        writes.push({
          setting: settingId,
          key,
          request: { setting: settingId, operation: 'Update', fields },
        });
      }
      for (const fields of plan.created) {
        const key = keyOf(setting, fields);
        writes.push({
          setting: settingId,
          key,
          request: { setting: settingId, operation: 'Create', fields },
        });
      }
      for (const { key, changes } of plan.updated) entry.updated.push({ key, changes });
    }

    if (writes.length > MAX_CHANGE_ENTRIES) {
      const message = `The import would write ${writes.length} entries; one import writes at most ${MAX_CHANGE_ENTRIES}: import the document in parts (for example one setting at a time)`;
      throw new AppException(ErrorCode.BadRequest, message, [
        { field: 'document.settings', message },
      ]);
    }
    const planRefused = Object.values(report).some((entry) => entry.refused.length > 0);
    const trial = await this.settings.trial(
      guildId,
      author,
      writes.map((write) => write.request),
      { apply: !dryRun && !planRefused },
    );
    this.report(report, writes, trial.outcomes);
    const refusals = refusalDetails(report);
    if (!dryRun && refusals.length > 0) {
      throw new AppException(
        ErrorCode.BadRequest,
        `The import was refused: ${refusals.length} ${refusals.length === 1 ? 'entry' : 'entries'} cannot be applied (see details); nothing was changed`,
        refusals,
      );
    }
    return {
      dry_run: dryRun,
      applied: trial.committed,
      settings: report,
      unknown_references: {
        roles: [...unknown.roles].sort(),
        channels: [...unknown.channels].sort(),
      },
      // A dry run's writes were made and rolled back: it recorded nothing.
      revisions: trial.committed
        ? trial.outcomes
            .flatMap((outcome) => (outcome.ok ? outcome.revisions : []))
            .map(revisionDto)
        : [],
    };
  }

  /** Puts each write's outcome in its setting's report: done (or doable), or refused and why. */
  private report(
    report: Record<string, SettingImportDto>,
    writes: readonly PlannedWrite[],
    outcomes: readonly WriteOutcome[],
  ): void {
    const refusedUpdates = new Set<string>();
    for (const [i, write] of writes.entries()) {
      const entry = report[write.setting];
      const outcome = outcomes[i];
      const { operation, fields } = write.request;
      if (!outcome.ok) {
        entry.refused.push({ key: write.key, operation, reasons: reasonsOf(outcome.error) });
        if (operation === 'Update') refusedUpdates.add(`${write.setting} ${stableJson(write.key)}`);
      } else if (operation === 'Create') {
        // As stored: a key the server generates is the server's, not the document's.
        const setting = this.registry.get(write.setting);
        const stored = (outcome.data ?? fields) as SettingRow;
        entry.created.push(setting ? exportedRow(setting.schema, stored) : stored);
      } else if (operation === 'Delete') {
        entry.deleted.push(write.key);
      }
    }
    // An update that is refused is reported as refused only.
    for (const [setting, entry] of Object.entries(report)) {
      entry.updated = entry.updated.filter(
        (update) => !refusedUpdates.has(`${setting} ${stableJson(update.key)}`),
      );
    }
  }

  /** The settings that hold configuration: those a client creates entries in. */
  private transferable(): RegisteredSetting[] {
    return this.registry.all().filter((setting) => setting.schema.operations.includes('Create'));
  }

  private async rowsOf(
    setting: RegisteredSetting,
    guildId: string,
    columns: RowColumns,
  ): Promise<SettingRow[]> {
    const rows = await this.entries.findAllInOrder(setting, guildId);
    return rows.map((row) => toApi(setting, row, columns));
  }
}

/** A refusal's message, and each of its details where it lists several problems. */
function reasonsOf(error: AppException): string[] {
  const details = (error.details ?? []) as ErrorDetail[];
  return details.length > 1 ? details.map((d) => `${d.field}: ${d.message}`) : [error.message];
}

function refusalDetails(report: Record<string, SettingImportDto>): ErrorDetail[] {
  return Object.entries(report).flatMap(([setting, entry]) =>
    entry.refused.map((refusal) => ({
      field: `${setting} ${stableJson(refusal.key)}`,
      message: refusal.reasons.join('; '),
    })),
  );
}
