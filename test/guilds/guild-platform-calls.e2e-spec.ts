import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { emulatorOf, loginAs, type TestLogin } from 'test/support/auth';
import type { Test } from 'supertest';
import { useTestApp, type TestApp } from 'test/support/test-app';

/** Every platform call about one guild: what an invented id must never cost. */
function perGuildCalls(emulator: PlatformEmulator): number {
  return emulator.requests.filter((request) => request.route.startsWith('GET /guilds/:guild_id'))
    .length;
}

/** Guild ids a client may invent: random, next to real ones, the extremes, a real guild without the bot. */
function inventedIds(count: number): string[] {
  const fixed = [
    '1',
    '18446744073709551615',
    DEMO_IDS.sandbox,
    (BigInt(DEMO_IDS.community) + 1n).toString(),
    (BigInt(DEMO_IDS.botLab) - 1n).toString(),
  ];
  const random = Array.from({ length: count - fixed.length }, (_, i) =>
    (1_100_000_000_000_000_000n + BigInt(i) * 7_919n + 1_000_000n).toString(),
  );
  return [...fixed, ...random];
}

async function inBatches<T>(
  items: T[],
  size: number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run));
}

describe('guild requests for guilds the bot is not in', () => {
  const t = useTestApp();
  let login: TestLogin;

  beforeAll(async () => {
    login = await loginAs(t(), DEMO_IDS.demoUser);
  });

  const get = (app: TestApp, path: string): Test =>
    app.http().get(path).set('Authorization', `Bearer ${login.token}`);

  it('make no per-guild platform call, however many ids are invented', async () => {
    const emulator = emulatorOf(t());
    const before = perGuildCalls(emulator);
    const ids = inventedIds(500);
    const paths = ids.flatMap((id) => [`/guilds/${id}/settings`, `/users/@me/guilds/${id}`]);
    expect(paths).toHaveLength(1_000);
    const statuses = new Map<number, number>();
    await inBatches(paths, 25, async (path) => {
      const res = await get(t(), path);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect(res.body).toEqual({ message: 'The bot is not in this guild', code: 'NotFound' });
    });
    expect(Object.fromEntries(statuses)).toEqual({ 404: 1_000 });
    expect(perGuildCalls(emulator) - before).toBe(0);
    // The bot's own guild list was read once for all of them.
    const botLists = emulator.requests.filter(
      (request) => request.route === 'GET /users/@me/guilds' && request.auth === 'bot',
    );
    expect(botLists).toHaveLength(1);
  });

  it('still serve a guild the bot is in', async () => {
    const info = await get(t(), `/users/@me/guilds/${DEMO_IDS.community}`).expect(200);
    expect(info.body.name).toBe('Demo Community');
    const settings = await get(t(), `/guilds/${DEMO_IDS.community}/settings`).expect(200);
    expect(Object.keys(settings.body)).toContain('permissions');
  });
});

describe('a guild the bot has left while its guild list is cached', () => {
  const t = useTestApp({ env: { PLATFORM_CACHE_TTL: '1' } });

  it('costs one guild lookup, no lookup of its parts, and that answer is kept longer', async () => {
    const login = await loginAs(t(), DEMO_IDS.carol);
    const emulator = emulatorOf(t());
    const get = (): Test =>
      t()
        .http()
        .get(`/users/@me/guilds/${DEMO_IDS.botLab}`)
        .set('Authorization', `Bearer ${login.token}`);
    // The bot's guild list is cached with the bot in the guild.
    await get().expect(200);
    emulator.state.removeMember(DEMO_IDS.botLab, DEMO_IDS.bot);
    // Past PLATFORM_CACHE_TTL, so the found answers have expired.
    await sleep(1_100);
    const before = emulator.requests.length;
    const res = await get().expect(404);
    expect(res.body).toEqual({ message: 'The bot is not in this guild', code: 'NotFound' });
    expect(emulator.requests.slice(before).map((request) => request.route)).toEqual([
      'GET /guilds/:guild_id',
    ]);
    // The refusal (a 403 the platform counts) is kept well past PLATFORM_CACHE_TTL.
    await sleep(1_100);
    await get().expect(404);
    expect(emulator.requests.length).toBe(before + 1);
  });
});
