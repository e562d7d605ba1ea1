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
    console.table(
      live.map((s) => ({
        id: s.id,
        type: s.type,
        name: s.name ?? '',
        state: s.state,
        created_at: s.createdAt.toISOString(),
        expires_at: s.expiresAt.toISOString(),
        last_used_at: s.lastUsedAt?.toISOString() ?? '',
      })),
    );
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
