import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { PlatformConnection } from 'src/platform/platform-connection';
import { PlatformService } from 'src/platform/platform.service';
import { useTestApp, type TestApp } from 'test/support/test-app';

/**
 * Needs a Redis server: runs in CI's second pass (REDIS_URL set), not in the plain `npm test` on a
 * machine without one.
 */
const describeWithRedis = process.env.REDIS_URL ? describe : describe.skip;

describeWithRedis('platform cache shared through Redis', () => {
  const env = { REDIS_KEY_PREFIX: `shared-${Date.now()}:`, PLATFORM_CACHE_TTL: '30' };
  const first = useTestApp({ env });
  const second = useTestApp({ env });

  const guildCalls = (t: TestApp): number =>
    t.app.get(PlatformConnection).emulator?.countRequests('GET /guilds/:guild_id') ?? -1;

  it("lets a second instance answer from the first instance's lookup", async () => {
    const before = [guildCalls(first()), guildCalls(second())];
    const fromFirst = await first().app.get(PlatformService).getGuild(DEMO_IDS.community);
    const fromSecond = await second().app.get(PlatformService).getGuild(DEMO_IDS.community);
    expect(fromSecond).toEqual(fromFirst);
    expect(guildCalls(first()) - before[0]).toBe(1);
    expect(guildCalls(second()) - before[1]).toBe(0);
  });
});
