import type { INestApplicationContext } from '@nestjs/common';
import { CliServices } from 'src/common/cli/cli-services';
import type { AppConfig } from 'src/config/app-config';
import { BanSessionCommand, sessionTable } from 'src/sessions/sessions.commands';
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
