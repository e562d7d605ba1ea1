import { readFileSync, writeFileSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { Command, CommandRunner, Option } from 'nest-commander';
import { CliError, requireSnowflake } from 'src/common/cli/cli-arguments';
import { CliServices } from 'src/common/cli/cli-services';
import { AppException } from 'src/common/errors/app.exception';
import { isSnowflake } from 'src/common/validation/snowflake';
import { toErrorDetails } from 'src/common/validation/validation-details';
import { ImportSettingsDto, type ImportReportDto } from 'src/settings/transfer/dto/transfer.dto';
import { SettingsTransferService } from 'src/settings/transfer/settings-transfer.service';
import { type SettingsAuthor } from 'src/settings/engine/settings-author';

interface AsOptions {
  as?: string;
}

/**
 * An operator's change, made with a user's permissions (by default the guild owner's, who holds
 * every permission): revisions name that user, and no session.
 */
async function operatorAuthor(
  transfer: SettingsTransferService,
  guildId: string,
  as: string | undefined,
): Promise<SettingsAuthor> {
  const userId = as ?? (await transfer.ownerOf(guildId));
  return { userId, id: null, type: null, scope: null };
}

/** The API's refusals as the CLI prints them. */
async function asCli<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!(error instanceof AppException)) throw error;
    const details = (error.details ?? []).map((d) => `\n  ${d.field}: ${d.message}`).join('');
    throw new CliError(`${error.message}${details}`);
  }
}

@Command({
  name: 'settings:export',
  arguments: '<guild_id>',
  description:
    "Write a guild's configuration as an export document (to --out, else to stdout), as GET …/settings/export does",
})
export class ExportSettingsCommand extends CommandRunner {
  constructor(private readonly services: CliServices) {
    super();
  }

  async run([guild]: string[], options: AsOptions & { out?: string }): Promise<void> {
    const guildId = requireSnowflake(guild, 'guild_id');
    const transfer = await this.services.get(SettingsTransferService);
    const author = await asCli(operatorAuthor(transfer, guildId, options.as));
    const document = await asCli(transfer.export(guildId, author));
    const text = `${JSON.stringify(document, null, 2)}\n`;
    if (options.out === undefined) {
      process.stdout.write(text);
      return;
    }
    writeFileSync(options.out, text);
    const entries = Object.values(document.settings).reduce((n, rows) => n + rows.length, 0);
    const settings = Object.keys(document.settings).length;
    console.log(
      `Exported ${counted(settings, 'setting')} (${counted(entries, 'entry', 'entries')}) of guild ${guildId} to ${options.out}`,
    );
  }

  @Option({ flags: '--out <file>', description: 'write the document to this file' })
  parseOut(value: string): string {
    return value;
  }

  @Option({
    flags: '--as <user_id>',
    description: "whose permissions to export with (default: the guild's owner)",
  })
  parseAs(value: string): string {
    return requireSnowflake(value, '--as');
  }
}

interface ImportOptions extends AsOptions {
  apply?: boolean;
  mapRole?: Record<string, string>;
  mapChannel?: Record<string, string>;
  mapUser?: Record<string, string>;
}

@Command({
  name: 'settings:import',
  arguments: '<guild_id> <file>',
  description:
    "Make a guild's settings equal to an export document: report the changes (a dry run), or with --apply make them, all or none",
})
export class ImportSettingsCommand extends CommandRunner {
  constructor(private readonly services: CliServices) {
    super();
  }

  async run([guild, file]: string[], options: ImportOptions): Promise<void> {
    const guildId = requireSnowflake(guild, 'guild_id');
    const document = readJsonFile(file);
    // The API's own rules (POST …/settings/import), so the CLI accepts what the API accepts.
    const request = plainToInstance(ImportSettingsDto, {
      document,
      dry_run: options.apply !== true,
      mapping: { roles: options.mapRole, channels: options.mapChannel, users: options.mapUser },
    });
    const problems = toErrorDetails(validateSync(request, { whitelist: true }));
    if (problems.length > 0) {
      throw new CliError(problems.map((p) => `${p.field}: ${p.message}`).join('; '));
    }
    const transfer = await this.services.get(SettingsTransferService);
    const author = await asCli(operatorAuthor(transfer, guildId, options.as));
    const report = await asCli(transfer.import(guildId, author, request));
    for (const line of describeReport(report)) console.log(line);
  }

  @Option({ flags: '--apply', description: 'make the changes (default: only report them)' })
  parseApply(): boolean {
    return true;
  }

  @Option({
    flags: '--as <user_id>',
    description: "whose permissions to import with (default: the guild's owner)",
  })
  parseAs(value: string): string {
    return requireSnowflake(value, '--as');
  }

  @Option({
    flags: '--map-role <from=to>',
    description: "use this guild's role for the document's (repeatable)",
  })
  parseMapRole(value: string, previous?: Record<string, string>): Record<string, string> {
    return withMapping(value, previous, '--map-role');
  }

  @Option({
    flags: '--map-channel <from=to>',
    description: "use this guild's channel for the document's (repeatable)",
  })
  parseMapChannel(value: string, previous?: Record<string, string>): Record<string, string> {
    return withMapping(value, previous, '--map-channel');
  }

  @Option({
    flags: '--map-user <from=to>',
    description: 'use this user for the document’s (repeatable)',
  })
  parseMapUser(value: string, previous?: Record<string, string>): Record<string, string> {
    return withMapping(value, previous, '--map-user');
  }
}

/**
 * Keys that name an object's class machinery rather than data: the API's JSON parser refuses
 * them, and class-transformer, which reads `constructor` as the class, fails on them.
 */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor']);

class PrototypeKeyError extends Error {}

/** The file's JSON, or a CliError saying in one line why there is none. */
export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(`${file} cannot be read: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text, (key: string, value: unknown) => {
      if (PROTOTYPE_KEYS.has(key)) throw new PrototypeKeyError(key);
      return value;
    });
  } catch (error) {
    if (error instanceof PrototypeKeyError) {
      throw new CliError(
        `${file} uses the key "${error.message}", which no export document holds (it names an object's prototype)`,
      );
    }
    throw new CliError(`${file} is not JSON: ${(error as Error).message}`);
  }
}

function withMapping(
  value: string,
  previous: Record<string, string> | undefined,
  flag: string,
): Record<string, string> {
  const [from, to, ...rest] = value.split('=');
  if (rest.length > 0 || !isSnowflake(from) || !isSnowflake(to)) {
    throw new CliError(`${flag} must be <id>=<id>, e.g. 1100000000000000104=1200000000000000104`);
  }
  return { ...previous, [from]: to };
}

/** The report as lines: per setting, what changes; then unknown references and the outcome. */
export function describeReport(report: ImportReportDto): string[] {
  const lines: string[] = [];
  for (const [setting, entry] of Object.entries(report.settings)) {
    const counts = [
      `${entry.created.length} created`,
      `${entry.updated.length} updated`,
      `${entry.deleted.length} deleted`,
      `${entry.unchanged.length} unchanged`,
      `${entry.refused.length} refused`,
    ];
    lines.push(`${setting}: ${counts.join(', ')}`);
    for (const refusal of entry.refused) {
      lines.push(`  refused ${JSON.stringify(refusal.key)}: ${refusal.reasons.join('; ')}`);
    }
  }
  const { roles, channels } = report.unknown_references;
  if (roles.length > 0) lines.push(`Roles not in this guild: ${roles.join(', ')}`);
  if (channels.length > 0) lines.push(`Channels not in this guild: ${channels.join(', ')}`);
  lines.push(
    report.applied
      ? `Applied: ${report.revisions.length} revisions recorded.`
      : 'Dry run: nothing was changed (run again with --apply).',
  );
  return lines;
}

/** `1 entry`, `2 entries`. */
export function counted(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
