import { Command, CommandRunner } from 'nest-commander';
import { cliReachNote } from 'src/common/auth/session-reach';
import { CliError, requireSnowflake } from 'src/common/cli/cli-arguments';
import { RedisConnection } from 'src/common/redis/redis.module';
import type { UserState } from 'src/users/user.entity';
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

  run([userId]: string[]): Promise<void> {
    return setState(this.users, this.redis, userId, 'banned', `User ${userId} is banned.`);
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

  run([userId]: string[]): Promise<void> {
    return setState(
      this.users,
      this.redis,
      userId,
      'normal',
      `User ${userId} is no longer banned.`,
    );
  }
}

/** Sets the user's state, says so, and says when running services apply it. */
async function setState(
  users: UsersService,
  redis: RedisConnection,
  userId: string,
  state: UserState,
  done: string,
): Promise<void> {
  if (!(await users.setState(requireSnowflake(userId, 'user_id'), state))) {
    throw new CliError(`No user ${userId}`);
  }
  console.log(done);
  const note = cliReachNote(redis.client !== null);
  if (note) console.log(note);
}
