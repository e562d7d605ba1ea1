import { mapConcurrent } from 'src/common/async/map-concurrent';

describe('mapConcurrent', () => {
  it.each([
    [[], 3],
    [[1], 3],
    [[1, 2, 3, 4, 5, 6, 7], 3],
    [[1, 2, 3], 10],
  ])('maps %j in order with at most %i under way', async (items, limit) => {
    let running = 0;
    let most = 0;
    const results = await mapConcurrent(items, limit, async (n) => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      running--;
      return n * 2;
    });
    expect(results).toEqual(items.map((n) => n * 2));
    expect(most).toBeLessThanOrEqual(limit);
  });

  it('rejects with the first failure, starts nothing after it and leaves nothing running', async () => {
    const started: number[] = [];
    let running = 0;
    const outcome = mapConcurrent([1, 2, 3, 4, 5, 6], 2, async (n) => {
      started.push(n);
      running++;
      await new Promise((resolve) => setImmediate(resolve));
      running--;
      if (n === 2) throw new Error(`failed ${n}`);
      return n;
    });
    await expect(outcome).rejects.toThrow('failed 2');
    expect(running).toBe(0);
    expect(started).toEqual([1, 2, 3]);
  });
});
