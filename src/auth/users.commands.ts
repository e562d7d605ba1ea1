import { Command, CommandRunner } from 'nest-commander';
import { UsersService } from 'src/auth/users.service';
import { CliError, requireSnowflake } from 'src/common/cli/cli-arguments';
import { cliReachNote, SessionInvalidation } from 'src/sessions/session-invalidation';

@Command({
  name: 'users:ban',
  arguments: '<user_id>',
  description:
    'Ban a user: their calls get ApiBanned (at once with REDIS_URL, otherwise within 30 s) and they cannot log in',
})
export class BanUserCommand extends CommandRunner {
  constructor(
    private readonly users: UsersService,
    private readonly invalidation: SessionInvalidation,
  ) {
    super();
  }

  async run([userId]: string[]): Promise<void> {
    if (!(await this.users.setState(requireSnowflake(userId, 'user_id'), 'banned'))) {
      throw new CliError(`No user ${userId}`);
    }
    console.log(`User ${userId} is banned.`);
    printReachNote(this.invalidation);
  }
}

@Command({ name: 'users:unban', arguments: '<user_id>', description: 'Lift a ban' })
export class UnbanUserCommand extends CommandRunner {
  constructor(
    private readonly users: UsersService,
    private readonly invalidation: SessionInvalidation,
  ) {
    super();
  }

  async run([userId]: string[]): Promise<void> {
    if (!(await this.users.setState(requireSnowflake(userId, 'user_id'), 'normal'))) {
      throw new CliError(`No user ${userId}`);
    }
    console.log(`User ${userId} is no longer banned.`);
    printReachNote(this.invalidation);
  }
}

function printReachNote(invalidation: SessionInvalidation): void {
  const note = cliReachNote(invalidation.isShared);
  if (note) console.log(note);
}
