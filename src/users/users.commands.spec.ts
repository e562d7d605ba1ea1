import type { RedisConnection } from 'src/common/redis/redis.module';
import { BanUserCommand, UnbanUserCommand } from 'src/users/users.commands';
import type { UsersService } from 'src/users/users.service';

const WITHOUT_REDIS =
  'Without REDIS_URL a running service applies this within 30 s (when its session cache expires); with REDIS_URL, at once.';

describe.each([
  ['users:ban', BanUserCommand, 'User 42 is banned.'],
  ['users:unban', UnbanUserCommand, 'User 42 is no longer banned.'],
])('%s', (_name, Command, done) => {
  const users = { setState: jest.fn(() => Promise.resolve(true)) } as unknown as UsersService;

  it.each([
    [false, [done, WITHOUT_REDIS]],
    [true, [done]],
  ])('with Redis %p, says when a running service applies it', async (isShared, lines) => {
    const printed = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const redis = { client: isShared ? {} : null } as RedisConnection;
      await new Command(users, redis).run(['42']);
      expect(printed.mock.calls).toEqual(lines.map((line) => [line]));
    } finally {
      printed.mockRestore();
    }
  });
});
