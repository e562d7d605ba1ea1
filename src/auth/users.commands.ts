import { Command, CommandRunner } from 'nest-commander';
import { UsersService } from 'src/auth/users.service';
import { CliError, requireSnowflake } from 'src/common/cli/cli-arguments';

@Command({
  name: 'users:ban',
  arguments: '<user_id>',
  description: 'Ban a user: every call of theirs gets ApiBanned at once, and they cannot log in',
})
export class BanUserCommand extends CommandRunner {
  constructor(private readonly users: UsersService) {
    super();
  }

  async run([userId]: string[]): Promise<void> {
    if (!(await this.users.setState(requireSnowflake(userId, 'user_id'), 'banned'))) {
      throw new CliError(`No user ${userId}`);
    }
    console.log(`User ${userId} is banned.`);
  }
}

@Command({ name: 'users:unban', arguments: '<user_id>', description: 'Lift a ban' })
export class UnbanUserCommand extends CommandRunner {
  constructor(private readonly users: UsersService) {
    super();
  }

  async run([userId]: string[]): Promise<void> {
    if (!(await this.users.setState(requireSnowflake(userId, 'user_id'), 'normal'))) {
      throw new CliError(`No user ${userId}`);
    }
    console.log(`User ${userId} is no longer banned.`);
  }
}
