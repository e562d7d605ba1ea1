import { Command, CommandRunner } from 'nest-commander';
import { cliReachNote } from 'src/common/auth/session-reach';
import { requireSnowflake } from 'src/common/cli/cli-arguments';
import { RedisConnection } from 'src/common/redis/redis.module';
import { UsersService } from 'src/users/users.service';

@Command({
  name: 'users:ban',
  arguments: '<user_id>',
  description:
    'Ban a user, also one who has not logged in yet: their calls get ApiBanned (at once with REDIS_URL, otherwise within 30 s) and they cannot log in',
})
export class BanUserCommand extends CommandRunner {
  constructor(
    private readonly users: UsersService,
    private readonly redis: RedisConnection,
  ) {
    super();
  }

  async run([user]: string[]): Promise<void> {
    const userId = requireSnowflake(user, 'user_id');
    const before = await this.users.setState(userId, 'banned');
    if (before === 'banned') {
      console.log(`User ${userId} was already banned.`);
    } else if (before === null) {
      // No sessions to end: the ban is read at their first login.
      console.log(`User ${userId} is banned. They have not logged in yet: their login is refused.`);
    } else {
      console.log(`User ${userId} is banned.`);
      printReach(this.redis);
    }
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

  async run([user]: string[]): Promise<void> {
    const userId = requireSnowflake(user, 'user_id');
    if ((await this.users.setState(userId, 'normal')) !== 'banned') {
      console.log(`User ${userId} is not banned.`);
      return;
    }
    console.log(`User ${userId} is no longer banned.`);
    printReach(this.redis);
  }
}

/** Says when running services apply a change to a user's sessions. */
function printReach(redis: RedisConnection): void {
  const note = cliReachNote(redis.client !== null);
  if (note) console.log(note);
}
