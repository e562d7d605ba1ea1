import type { RedisConnection } from 'src/common/redis/redis.module';
import type { UserState } from 'src/users/user.entity';
import { BanUserCommand, UnbanUserCommand } from 'src/users/users.commands';
import type { UsersService } from 'src/users/users.service';

const WITHOUT_REDIS =
  'Without REDIS_URL a running service applies this within 30 s (when its session cache expires); with REDIS_URL, at once.';

/** Runs the command on a user whose state was `before`; answers what it printed. */
async function printed(
  Command: typeof BanUserCommand | typeof UnbanUserCommand,
  before: UserState | null,
  isShared = false,
): Promise<string[]> {
  const users = { setState: jest.fn(() => Promise.resolve(before)) } as unknown as UsersService;
  const redis = { client: isShared ? {} : null } as RedisConnection;
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    await new Command(users, redis).run(['42']);
    return log.mock.calls.map(([line]) => line as string);
  } finally {
    log.mockRestore();
  }
}

describe('users:ban', () => {
  it.each<[string, UserState | null, boolean, string[]]>([
    ['a user', 'normal', false, ['User 42 is banned.', WITHOUT_REDIS]],
    ['a user, with Redis', 'normal', true, ['User 42 is banned.']],
    ['a banned user', 'banned', false, ['User 42 was already banned.']],
    [
      'an id that has not logged in',
      null,
      false,
      ['User 42 is banned. They have not logged in yet: their login is refused.'],
    ],
  ])('bans %s and says when running services apply it', async (_name, before, redis, lines) => {
    expect(await printed(BanUserCommand, before, redis)).toEqual(lines);
  });
});

describe('users:unban', () => {
  it.each<[string, UserState | null, string[]]>([
    ['a banned user', 'banned', ['User 42 is no longer banned.', WITHOUT_REDIS]],
    ['a user who is not banned', 'normal', ['User 42 is not banned.']],
    ['an id that has not logged in', null, ['User 42 is not banned.']],
  ])('unbans %s', async (_name, before, lines) => {
    expect(await printed(UnbanUserCommand, before)).toEqual(lines);
  });
});
