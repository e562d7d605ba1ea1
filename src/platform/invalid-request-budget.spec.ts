import { countsAsInvalid, InvalidRequestBudget } from 'src/platform/invalid-request-budget';

describe('countsAsInvalid', () => {
  it.each([
    [200, null, false],
    [204, null, false],
    [400, null, false],
    [401, null, true],
    [403, null, true],
    [404, null, false],
    [429, null, true],
    [429, 'user', true],
    [429, 'global', true],
    // The platform does not count rate limits of a shared resource against the caller.
    [429, 'shared', false],
    [500, null, false],
  ])('status %i with scope %s: %s', (status, scope, expected) => {
    expect(countsAsInvalid(status, scope)).toBe(expected);
  });
});

describe('InvalidRequestBudget', () => {
  function budget(limit: number): { budget: InvalidRequestBudget; advance: (ms: number) => void } {
    let time = 5_000_000;
    return {
      budget: new InvalidRequestBudget(limit, () => time),
      advance: (ms) => (time += ms),
    };
  }

  it('is spent once the limit is reached within ten minutes', () => {
    const { budget: b, advance } = budget(3);
    b.record();
    advance(60_000);
    b.record();
    expect(b.spent()).toBe(false);
    advance(60_000);
    b.record();
    expect(b.count()).toBe(3);
    expect(b.spent()).toBe(true);
  });

  it('recovers as answers leave the ten-minute window', () => {
    const { budget: b, advance } = budget(3);
    b.record();
    advance(5 * 60_000);
    b.record();
    b.record();
    expect(b.spent()).toBe(true);
    // The first answer is now more than ten minutes old (and one slot of 10 s, for safety).
    advance(5 * 60_000 + 10_000);
    expect(b.count()).toBe(2);
    expect(b.spent()).toBe(false);
    advance(5 * 60_000);
    expect(b.count()).toBe(0);
  });

  it('never undercounts: an answer is kept at least the full window', () => {
    const { budget: b, advance } = budget(100);
    b.record();
    advance(10 * 60_000 - 1);
    expect(b.count()).toBe(1);
  });

  it('counts many answers in one slot and across a long idle time', () => {
    const { budget: b, advance } = budget(10_000);
    for (let i = 0; i < 9_000; i++) b.record();
    expect(b.count()).toBe(9_000);
    advance(3 * 60 * 60_000);
    expect(b.count()).toBe(0);
    b.record();
    expect(b.count()).toBe(1);
  });

  it('drops what was counted ahead of a clock that stepped back, rather than holding the budget spent', () => {
    const { budget: b, advance } = budget(3);
    for (let i = 0; i < 3; i++) b.record();
    expect(b.spent()).toBe(true);
    advance(-60 * 60_000);
    expect(b.count()).toBe(0);
    expect(b.spent()).toBe(false);
    b.record();
    expect(b.count()).toBe(1);
  });
});
