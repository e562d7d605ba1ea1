import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { Command, CommandRunner, Option } from 'nest-commander';
import { UsersService } from 'src/users/users.service';
import { cliReachNote } from 'src/common/auth/session-reach';
import {
  CliError,
  requirePositiveInteger,
  requireSnowflake,
  requireUuid,
} from 'src/common/cli/cli-arguments';
import { CliServices } from 'src/common/cli/cli-services';
import type { ErrorDetail } from 'src/common/errors/app.exception';
import { toErrorDetails } from 'src/common/validation/validation-details';
import { AppConfig } from 'src/config/app-config';
import { CreateSessionDto } from 'src/sessions/dto/create-session.dto';
import { SessionsService } from 'src/sessions/sessions.service';

interface CreateTokenOptions {
  user?: string;
  name?: string;
  expiry?: number;
}

@Command({
  name: 'tokens:create',
  description: 'Create an API token for a user; the token is printed once, on the last line',
})
export class CreateTokenCommand extends CommandRunner {
  constructor(
    private readonly services: CliServices,
    private readonly config: AppConfig,
  ) {
    super();
  }

  async run(_arguments: string[], options: CreateTokenOptions): Promise<void> {
    const userId = requireSnowflake(options.user, '--user');
    const expiry = options.expiry ?? this.config.sessions.apiTokenMaxTtlSeconds;
    // The API's own rules (POST /sessions), so the CLI accepts exactly what the API accepts.
    const request = plainToInstance(CreateSessionDto, { name: options.name, type: 'api', expiry });
    const problems = toErrorDetails(validateSync(request));
    if (problems.length > 0) throw new CliError(problems.map(asOption).join('; '));
    const { name } = request;
    const users = await this.services.get(UsersService);
    const sessions = await this.services.get(SessionsService);
    await users.ensureExists(userId);
    const { session, token } = await sessions.issueApiToken(userId, name, expiry);
    const warning = rootUsersWarning(userId, this.config.rootUsers);
    if (warning) console.warn(warning);
    console.log(
      `API token "${name}" (session ${session.id}) for user ${userId}, expires ${session.expiresAt.toISOString()}:`,
    );
    console.log(token);
  }

  @Option({ flags: '--user <user_id>', description: 'the user the token acts as', required: true })
  parseUser(value: string): string {
    return value;
  }

  @Option({
    flags: '--name <name>',
    description: 'a name to recognise the token by',
    required: true,
  })
  parseName(value: string): string {
    return value;
  }

  @Option({
    flags: '--expiry <seconds>',
    description: 'lifetime in seconds (default and maximum: API_TOKEN_MAX_TTL)',
  })
  parseExpiry(value: string): number {
    return requirePositiveInteger(value, '--expiry');
  }
}

/**
 * The token works on every route but the internal ones when its user is not a root user: said
 * when it is made, not by the bot's first 403. ROOT_USERS is read at each request, so adding the
 * user later makes this same token work.
 */
export function rootUsersWarning(userId: string, rootUsers: readonly string[]): string | null {
  if (rootUsers.includes(userId)) return null;
  const listed = rootUsers.length === 0 ? 'empty' : rootUsers.join(',');
  return `Warning: user ${userId} is not in ROOT_USERS (${listed}), so the internal routes (/internal/*: the bot's shard, guild and guild-state reports) will refuse this token with 403 Restricted. A token for the bot's processes needs its user's id in ROOT_USERS where the service runs: add it and restart the service, and this token works there.`;
}

@Command({
  name: 'sessions:ban',
  arguments: '<session_id>',
  description:
    'Ban a session or API token: it gets ApiBanned (at once with REDIS_URL, otherwise within 30 s)',
})
export class BanSessionCommand extends CommandRunner {
  constructor(
    private readonly services: CliServices,
    private readonly config: AppConfig,
  ) {
    super();
  }

  async run([session]: string[]): Promise<void> {
    const sessionId = requireUuid(session, 'session_id');
    const sessions = await this.services.get(SessionsService);
    if (!(await sessions.ban(sessionId))) {
      throw new CliError(`No session ${sessionId}`);
    }
    console.log(`Session ${sessionId} is banned.`);
    const note = cliReachNote(this.config.redisUrl !== null);
    if (note) console.log(note);
  }
}

@Command({ name: 'sessions:list', description: "List a user's live sessions" })
export class ListSessionsCommand extends CommandRunner {
  constructor(private readonly services: CliServices) {
    super();
  }

  async run(_arguments: string[], options: { user?: string }): Promise<void> {
    const userId = requireSnowflake(options.user, '--user');
    const sessions = await this.services.get(SessionsService);
    const live = await sessions.listLive(userId);
    if (live.length === 0) {
      console.log('No live sessions.');
      return;
    }
    for (const line of sessionTable(live)) console.log(line);
  }

  @Option({ flags: '--user <user_id>', description: 'whose sessions', required: true })
  parseUser(value: string): string {
    return value;
  }
}

@Command({ name: 'sessions:purge-expired', description: 'Delete expired sessions now' })
export class PurgeExpiredSessionsCommand extends CommandRunner {
  constructor(private readonly services: CliServices) {
    super();
  }

  async run(): Promise<void> {
    const sessions = await this.services.get(SessionsService);
    console.log(`Purged ${await sessions.purgeExpired()} expired session(s).`);
  }
}

/** A problem with a field, said of the command-line option that sets it (`--expiry must …`). */
function asOption({ field, message }: ErrorDetail): string {
  return message.startsWith(`${field} `) ? `--${message}` : `--${field}: ${message}`;
}

/** A session as `sessions:list` shows it. */
export interface ListedSession {
  id: string;
  type: string;
  name: string | null;
  state: string;
  expiresAt: Date;
  lastUsedAt: Date | null;
}

/** Longer names are cut (with `…`): the table fits a terminal of 100 columns. */
const NAME_WIDTH = 16;

/**
 * The sessions as a table of aligned columns, one line each, under 100 characters: the full id
 * (what `sessions:revoke` takes), then type, name, state, the day it expires and its last use to
 * the minute (UTC).
 */
export function sessionTable(sessions: readonly ListedSession[]): string[] {
  const minute = (date: Date | null): string =>
    date ? date.toISOString().slice(0, 16).replace('T', ' ') : '-';
  const name = (value: string | null): string => {
    const text = value ?? '-';
    return text.length > NAME_WIDTH ? `${text.slice(0, NAME_WIDTH - 1)}…` : text;
  };
  const rows = [
    ['ID', 'TYPE', 'NAME', 'STATE', 'EXPIRES', 'LAST USED (UTC)'],
    ...sessions.map((s) => [
      s.id,
      s.type,
      name(s.name),
      s.state,
      s.expiresAt.toISOString().slice(0, 10),
      minute(s.lastUsedAt),
    ]),
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column])))
      .join('  '),
  );
}
