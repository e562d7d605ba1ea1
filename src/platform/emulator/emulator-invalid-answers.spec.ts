import { InvalidAnswerCounts } from 'src/platform/emulator/emulator-invalid-answers';

function counts(maxAddresses?: number): {
  counts: InvalidAnswerCounts;
  advance: (ms: number) => void;
} {
  let time = 1_700_000_000_000;
  return {
    counts: new InvalidAnswerCounts(() => time, maxAddresses),
    advance: (ms) => (time += ms),
  };
}

describe('InvalidAnswerCounts', () => {
  it.each([
    [200, null, 0],
    [400, null, 0],
    [401, null, 1],
    [403, null, 1],
    [404, null, 0],
    [429, 'user', 1],
    [429, 'global', 1],
    // The platform does not hold a shared resource's limit against the caller.
    [429, 'shared', 0],
    [500, null, 0],
  ])('counts status %i with scope %s as %i', (status, scope, expected) => {
    const { counts: c } = counts();
    c.record('10.0.0.1', status, scope);
    expect(c.count('10.0.0.1')).toBe(expected);
  });

  it('counts per address, and in total', () => {
    const { counts: c } = counts();
    c.record('10.0.0.1', 401, null);
    c.record('10.0.0.1', 429, 'user');
    c.record('10.0.0.2', 403, null);
    expect(c.count('10.0.0.1')).toBe(2);
    expect(c.count('10.0.0.2')).toBe(1);
    expect(c.count('10.0.0.3')).toBe(0);
    expect(c.count()).toBe(3);
  });

  it('forgets answers older than ten minutes (and a slot)', () => {
    const { counts: c, advance } = counts();
    c.record('10.0.0.1', 401, null);
    advance(5 * 60_000);
    c.record('10.0.0.1', 401, null);
    advance(5 * 60_000 + 10_000);
    expect(c.count('10.0.0.1')).toBe(1);
    advance(5 * 60_000);
    expect(c.count('10.0.0.1')).toBe(0);
  });

  it('keeps at most maxAddresses: quiet ones first, then the one counted longest ago', () => {
    const { counts: c, advance } = counts(3);
    c.record('quiet', 401, null);
    advance(11 * 60_000);
    c.record('a', 401, null);
    c.record('b', 401, null);
    c.record('c', 401, null);
    expect(c.size).toBe(3);
    expect(c.count('a')).toBe(1);
    // Full, with nothing quiet to drop: the least recently counted goes.
    c.record('a', 401, null);
    c.record('d', 401, null);
    expect(c.size).toBe(3);
    expect([c.count('a'), c.count('b'), c.count('c'), c.count('d')]).toEqual([2, 0, 1, 1]);
  });
});
