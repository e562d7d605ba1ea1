import type { INestApplicationContext } from '@nestjs/common';
import { CliServices } from 'src/common/cli/cli-services';
import type { AppConfig } from 'src/config/app-config';
import {
  BanSessionCommand,
  CreateTokenCommand,
  rootUsersWarning,
  sessionTable,
} from 'src/sessions/sessions.cli';
import type { SessionsService } from 'src/sessions/sessions.service';

const SESSION = '0b6f3a52-6c1e-4d55-9a49-1f2e6c7d8e90';
const WITHOUT_REDIS =
  'Without REDIS_URL a running service applies this within 30 s (when its session cache expires); with REDIS_URL, at once.';

describe('sessions:ban', () => {
  const sessions = { ban: jest.fn(() => Promise.resolve(true)) } as unknown as SessionsService;
  const services = new CliServices(() =>
    Promise.resolve({ get: () => sessions } as unknown as INestApplicationContext),
  );

  it.each([
    [false, [`Session ${SESSION} is banned.`, WITHOUT_REDIS]],
    [true, [`Session ${SESSION} is banned.`]],
  ])('with Redis %p, says when a running service applies it', async (isShared, lines) => {
    const printed = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const config = { redisUrl: isShared ? 'redis://127.0.0.1:6379' : null } as AppConfig;
      await new BanSessionCommand(services, config).run([SESSION]);
      expect(printed.mock.calls).toEqual(lines.map((line) => [line]));
    } finally {
      printed.mockRestore();
    }
  });
});

describe('tokens:create', () => {
  const sessions = {
    issueApiToken: jest.fn(() =>
      Promise.resolve({
        session: { id: SESSION, expiresAt: new Date('2027-01-01T00:00:00.000Z') },
        token: 'ara_token',
      }),
    ),
  };
  const users = { ensureExists: jest.fn(() => Promise.resolve()) };
  const services = new CliServices(() =>
    Promise.resolve({
      get: (type: { name: string }) => (type.name === 'UsersService' ? users : sessions),
    } as unknown as INestApplicationContext),
  );
  const config = (rootUsers: string[]): AppConfig =>
    ({ rootUsers, sessions: { apiTokenMaxTtlSeconds: 3600 } }) as unknown as AppConfig;

  it.each([
    [['42'], []],
    [[], [rootUsersWarning('42', [])]],
    [['7', '8'], [rootUsersWarning('42', ['7', '8'])]],
  ])(
    'with ROOT_USERS %p, warns when the internal routes will refuse the token',
    async (rootUsers, warnings) => {
      const printed = jest.spyOn(console, 'log').mockImplementation(() => undefined);
      const warned = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
      try {
        await new CreateTokenCommand(services, config(rootUsers)).run([], {
          user: '42',
          name: 'bot',
        });
        expect(warned.mock.calls).toEqual(warnings.map((line) => [line]));
        // The token stays the last line printed, for scripts that read it.
        expect(printed.mock.calls.at(-1)).toEqual(['ara_token']);
      } finally {
        printed.mockRestore();
        warned.mockRestore();
      }
    },
  );

  it('says what the refusal will be and how to lift it', () => {
    expect(rootUsersWarning('42', ['7'])).toBe(
      "Warning: user 42 is not in ROOT_USERS (7), so the internal routes (/internal/*: the bot's shard, guild and guild-state reports) will refuse this token with 403 Restricted. A token for the bot's processes needs its user's id in ROOT_USERS where the service runs: add it and restart the service, and this token works there.",
    );
  });
});

describe('sessions:list, as a table', () => {
  const at = new Date('2026-11-29T07:45:12.345Z');
  const rows = sessionTable([
    {
      id: SESSION,
      type: 'login',
      name: null,
      state: 'active',
      expiresAt: at,
      lastUsedAt: null,
    },
    {
      id: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f',
      type: 'api',
      name: 'a very long name for a moderation script that syncs',
      state: 'banned',
      expiresAt: at,
      lastUsedAt: at,
    },
  ]);

  it('fits 100 columns, whatever the names', () => {
    for (const line of rows) expect(line.length).toBeLessThanOrEqual(100);
  });

  it('shows the full id, the type, the name (cut), the state and minutes in UTC', () => {
    expect(rows).toEqual([
      expect.stringMatching(/^ID +TYPE +NAME +STATE +EXPIRES +LAST USED \(UTC\)$/),
      expect.stringMatching(new RegExp(`^${SESSION} +login +- +active +2026-11-29 +-$`)),
      expect.stringMatching(/ api +a very long nam… +banned +2026-11-29 +2026-11-29 07:45$/),
    ]);
  });
});
