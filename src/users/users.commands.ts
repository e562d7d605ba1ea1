import { Command, CommandRunner } from 'nest-commander';
import { cliReachNote } from 'src/common/auth/session-reach';
import { CliError, requireSnowflake } from 'src/common/cli/cli-arguments';
import { RedisConnection } from 'src/common/redis/redis.module';
import { UsersService } from 'src/users/users.service';

@Command({
  name: 'users:ban',
  arguments: '<user_id>',
  description:
    'Ban a user: their calls get ApiBanned (at once with REDIS_URL, otherwise within 30 s) and they cannot log in',
})
export class BanUserCommand extends CommandRunner {
  constructor(
    private readonly users: UsersService,
    private readonly redis: RedisConnection,
  ) {
    super();
  }

  async run([userId]: string[]): Promise<void> {
    if (!(await this.users.setState(requireSnowflake(userId, 'user_id'), 'banned'))) {
      throw new CliError(`No user ${userId}`);
    }
    console.log(`User ${userId} is banned.`);
    printReachNote(this.redis);
  }
}

@Command({ name: 'users:unban', arguments: '<user_id>', description: 'Lift a ban' })
export class UnbanUserCommand extends CommandRunner {
  constructor(
    private readonly users: UsersService,
    private readonly redis: RedisConnection,
  ) {
    super();
  }

  async run([userId]: string[]): Promise<void> {
    if (!(await this.users.setState(requireSnowflake(userId, 'user_id'), 'normal'))) {
      throw new CliError(`No user ${userId}`);
    }
    console.log(`User ${userId} is no longer banned.`);
    printReachNote(this.redis);
  }
}

function printReachNote(redis: RedisConnection): void {
  const note = cliReachNote(redis.client !== null);
  if (note) console.log(note);
}
