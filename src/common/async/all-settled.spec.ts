import { allSettled } from 'src/common/async/all-settled';

describe('allSettled', () => {
  it('answers every value in order', async () => {
    await expect(allSettled([Promise.resolve(1), Promise.resolve('two')])).resolves.toEqual([
      1,
      'two',
    ]);
  });

  it('rejects with the first failure in the order given, once every promise has settled', async () => {
    const settled: string[] = [];
    const slow = new Promise<number>((resolve) =>
      setTimeout(() => {
        settled.push('slow');
        resolve(3);
      }, 20),
    );
    const failing = Promise.reject(new Error('first'));
    const later = Promise.reject(new Error('second'));
    await expect(allSettled([slow, failing, later])).rejects.toThrow('first');
    // Promise.all would have rejected before the slow one settled.
    expect(settled).toEqual(['slow']);
  });
});
