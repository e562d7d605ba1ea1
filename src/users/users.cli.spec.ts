import type { INestApplicationContext } from '@nestjs/common';
import { CliError } from 'src/common/cli/cli-arguments';
import { CliServices } from 'src/common/cli/cli-services';
import type { AppConfig } from 'src/config/app-config';
import type { UserState } from 'src/users/user.entity';
import { BanUserCommand, UnbanUserCommand } from 'src/users/users.cli';
import type { UsersService } from 'src/users/users.service';

const WITHOUT_REDIS =
  'Without REDIS_URL a running service applies this within 30 s (when its session cache expires); with REDIS_URL, at once.';

/** Runs the command on a user whose state was `before`; answers what it printed. */
async function printed(
  Command: typeof BanUserCommand | typeof UnbanUserCommand,
  before: UserState | null,
  redisUrl: string | null = null,
): Promise<string[]> {
  const users = { setState: jest.fn(() => Promise.resolve(before)) } as unknown as UsersService;
  const services = new CliServices(() =>
    Promise.resolve({ get: () => users } as unknown as INestApplicationContext),
  );
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    await new Command(services, { redisUrl } as AppConfig).run(['42']);
    return log.mock.calls.map(([line]) => line as string);
  } finally {
    log.mockRestore();
  }
}

describe('users:ban', () => {
  it.each<[string, UserState | null, string | null, string[]]>([
    ['a user', 'normal', null, ['User 42 is banned.', WITHOUT_REDIS]],
    ['a user, with Redis', 'normal', 'redis://127.0.0.1:6379', ['User 42 is banned.']],
    ['a banned user', 'banned', null, ['User 42 was already banned.']],
    [
      'an id that has not logged in',
      null,
      null,
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

describe.each([
  ['users:ban', BanUserCommand],
  ['users:unban', UnbanUserCommand],
])('%s with a wrong user id', (_name, Command) => {
  it('refuses it before starting the database', async () => {
    const start = jest.fn(() => Promise.reject(new Error('the services must not start')));
    const run = new Command(new CliServices(start), { redisUrl: null } as AppConfig).run(['abc']);
    await expect(run).rejects.toThrow(
      new CliError('user_id must be a snowflake (a decimal id of at most 20 digits)'),
    );
    expect(start).not.toHaveBeenCalled();
  });
});
