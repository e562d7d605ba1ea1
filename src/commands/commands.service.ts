import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { toBotState } from 'src/commands/bot-state';
import { catalogProblems, type DeclaredCommand } from 'src/commands/catalog-rules';

/** The command catalog the service runs with (a token, so tests can boot with another). */
export const COMMAND_DECLARATIONS = Symbol('COMMAND_DECLARATIONS');

export class InvalidCatalogError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`The command catalog breaks the platform's rules: ${problems.join('; ')}`);
    this.name = 'InvalidCatalogError';
  }
}

/**
 * The bot's built-in commands: checked against the platform's rules when the service starts (a bad
 * declaration stops the boot, naming the command), and served as one prepared JSON document.
 */
@Injectable()
export class CommandsService {
  /** `GET /bot-state` exactly as sent, and its strong entity tag. */
  readonly botStateJson: string;
  readonly etag: string;

  constructor(@Inject(COMMAND_DECLARATIONS) readonly catalog: readonly DeclaredCommand[]) {
    const problems = catalogProblems(catalog);
    if (problems.length > 0) throw new InvalidCatalogError(problems);
    this.botStateJson = JSON.stringify(toBotState(catalog));
    this.etag = `"${createHash('sha256').update(this.botStateJson).digest('base64url')}"`;
  }
}
