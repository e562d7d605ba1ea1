import type { RedisConnection } from 'src/common/redis/redis.module';
import { BanSessionCommand } from 'src/sessions/sessions.commands';
import type { SessionsService } from 'src/sessions/sessions.service';

const SESSION = '0b6f3a52-6c1e-4d55-9a49-1f2e6c7d8e90';
const WITHOUT_REDIS =
  'Without REDIS_URL a running service applies this within 30 s (when its session cache expires); with REDIS_URL, at once.';

describe('sessions:ban', () => {
  const sessions = { ban: jest.fn(() => Promise.resolve(true)) } as unknown as SessionsService;

  it.each([
    [false, [`Session ${SESSION} is banned.`, WITHOUT_REDIS]],
    [true, [`Session ${SESSION} is banned.`]],
  ])('with Redis %p, says when a running service applies it', async (isShared, lines) => {
    const printed = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const redis = { client: isShared ? {} : null } as RedisConnection;
      await new BanSessionCommand(sessions, redis).run([SESSION]);
      expect(printed.mock.calls).toEqual(lines.map((line) => [line]));
    } finally {
      printed.mockRestore();
    }
  });
});
