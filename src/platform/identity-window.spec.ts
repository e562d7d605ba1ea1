import {
  decideInWindow,
  IDENTITY_WINDOW_MS,
  LocalIdentityWindows,
  type WindowEntry,
} from 'src/platform/identity-window';

const NOW = 10_000;

/** `count` calls of `caller`, let through `agoMs` before NOW. */
function calls(caller: string, count: number, agoMs = 100): WindowEntry[] {
  return Array.from({ length: count }, () => ({ at: NOW - agoMs, caller }));
}

describe('decideInWindow', () => {
  it.each<[string, WindowEntry[], string, number, ReturnType<typeof decideInWindow>]>([
    ['an empty window lets a call through', [], 'a', 10, { admitted: true }],
    [
      'a crowd behind one caller is let through while the window is less than half used',
      calls('nat', 4),
      'nat',
      10,
      { admitted: true },
    ],
    [
      'one caller alone may use the whole window (its share is all of it)',
      calls('nat', 9),
      'nat',
      10,
      { admitted: true },
    ],
    [
      'nobody passes a full window; the wait is until its oldest call leaves it',
      [...calls('a', 5, 300), ...calls('b', 5, 100)],
      'c',
      10,
      { admitted: false, retryAfterMs: IDENTITY_WINDOW_MS - 300, reason: 'full' },
    ],
    [
      'past half, a caller below its share is let through',
      [...calls('a', 4, 500), ...calls('b', 1)],
      'a',
      10,
      // Two callers: a share of 5 each.
      { admitted: true },
    ],
    [
      'past half, a caller holding its share is refused while others are not',
      [...calls('a', 5, 500), ...calls('b', 1)],
      'a',
      10,
      { admitted: false, retryAfterMs: IDENTITY_WINDOW_MS - 500, reason: 'share' },
    ],
    [
      'past half, a caller who has asked nothing yet is let through',
      [...calls('a', 5, 500), ...calls('b', 1)],
      'c',
      10,
      { admitted: true },
    ],
    [
      'many callers: each still gets one call while the window has room',
      Array.from({ length: 9 }, (_, i) => ({ at: NOW - 100, caller: `ip${i}` })),
      'newcomer',
      10,
      { admitted: true },
    ],
    [
      'calls under way hold their places; with no call answered, the wait is a window',
      calls('a', 10, -5_000),
      'b',
      10,
      { admitted: false, retryAfterMs: IDENTITY_WINDOW_MS, reason: 'full' },
    ],
    [
      'calls older than the window are not counted',
      calls('a', 10, IDENTITY_WINDOW_MS),
      'a',
      10,
      { admitted: true },
    ],
  ])('%s', (_name, entries, caller, limit, expected) => {
    expect(decideInWindow(entries, caller, limit, NOW)).toEqual(expected);
  });

  it.each<[string, WindowEntry[], ReturnType<typeof decideInWindow>]>([
    [
      'a caller who asked much is let through below half the window',
      calls('a', 4),
      { admitted: true },
    ],
    [
      'past half, a caller who asked much is refused while others hold places, however little it holds',
      calls('b', 5, 300),
      { admitted: false, retryAfterMs: IDENTITY_WINDOW_MS - 300, reason: 'share' },
    ],
    [
      'a caller who asked much, alone in the window (a crowd behind one address), may fill it',
      calls('heavy', 9),
      { admitted: true },
    ],
  ])('%s', (_name, entries, expected) => {
    expect(decideInWindow(entries, 'heavy', 10, NOW, false)).toEqual(expected);
  });

  it('keeps every window of its length at the limit, however the callers ask', async () => {
    // 20 callers asking every 5 ms for 3 windows: no window ever holds more than the limit.
    let clock = 0;
    const windows = new LocalIdentityWindows(() => clock);
    const admitted: number[] = [];
    const identity = { key: 'bot', label: 'the bot token', perSecond: 50 };
    for (clock = 0; clock < 3 * IDENTITY_WINDOW_MS; clock += 5) {
      for (let caller = 0; caller < 20; caller++) {
        const taken = await windows.take(identity, `user:${caller}`, 50, true);
        if (!taken.admitted) continue;
        // Answered at once.
        taken.place.done();
        admitted.push(clock);
      }
    }
    const inWindowFrom = (start: number): number =>
      admitted.filter((at) => at >= start && at < start + IDENTITY_WINDOW_MS).length;
    expect(Math.max(...admitted.map(inWindowFrom))).toBe(50);
    // Every caller got its turn: none was starved by the others.
    expect(admitted.length).toBeGreaterThanOrEqual(100);
  });

  it('holds a place until a window after its answer, however long the call took', async () => {
    let clock = 0;
    const windows = new LocalIdentityWindows(() => clock);
    const identity = { key: 'client', label: 'the token endpoint', perSecond: 2 };
    const first = await windows.take(identity, 'a', 2, true);
    const second = await windows.take(identity, 'b', 2, true);
    if (!first.admitted || !second.admitted) throw new Error('both fit an empty window');
    clock = 5_000;
    // Both still under way: no room, whatever the time.
    expect(await windows.take(identity, 'c', 2, true)).toMatchObject({ admitted: false });
    first.place.done();
    clock = 5_000 + IDENTITY_WINDOW_MS - 1;
    expect(await windows.take(identity, 'c', 2, true)).toMatchObject({
      admitted: false,
      retryAfterMs: 1,
    });
    clock = 5_000 + IDENTITY_WINDOW_MS;
    expect(await windows.take(identity, 'c', 2, true)).toMatchObject({ admitted: true });
  });
});
