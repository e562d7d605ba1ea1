import { Command, CommandRunner } from 'nest-commander';
import { cliReachNote } from 'src/common/auth/session-reach';
import { requireSnowflake } from 'src/common/cli/cli-arguments';
import { CliServices } from 'src/common/cli/cli-services';
import { AppConfig } from 'src/config/app-config';
import { UsersService } from 'src/users/users.service';

@Command({
  name: 'users:ban',
  arguments: '<user_id>',
  description:
    'Ban a user, also one who has not logged in yet: their calls get ApiBanned (at once with REDIS_URL, otherwise within 30 s) and they cannot log in',
})
export class BanUserCommand extends CommandRunner {
  constructor(
    private readonly services: CliServices,
    private readonly config: AppConfig,
  ) {
    super();
  }

  async run([user]: string[]): Promise<void> {
    const userId = requireSnowflake(user, 'user_id');
    const users = await this.services.get(UsersService);
    const before = await users.setState(userId, 'banned');
    if (before === 'banned') {
      console.log(`User ${userId} was already banned.`);
    } else if (before === null) {
      // No sessions to end: the ban is read at their first login.
      console.log(`User ${userId} is banned. They have not logged in yet: their login is refused.`);
    } else {
      console.log(`User ${userId} is banned.`);
      printReach(this.config);
    }
  }
}

@Command({ name: 'users:unban', arguments: '<user_id>', description: 'Lift a ban' })
export class UnbanUserCommand extends CommandRunner {
  constructor(
    private readonly services: CliServices,
    private readonly config: AppConfig,
  ) {
    super();
  }

  async run([user]: string[]): Promise<void> {
    const userId = requireSnowflake(user, 'user_id');
    const users = await this.services.get(UsersService);
    if ((await users.setState(userId, 'normal')) !== 'banned') {
      console.log(`User ${userId} is not banned.`);
      return;
    }
    console.log(`User ${userId} is no longer banned.`);
    printReach(this.config);
  }
}

/** Says when running services apply a change to a user's sessions. */
function printReach(config: AppConfig): void {
  const note = cliReachNote(config.redisUrl !== null);
  if (note) console.log(note);
}
