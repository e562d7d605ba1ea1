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
  it.each<[string, WindowEntry[], string, string[], ReturnType<typeof decideInWindow>]>([
    ['an empty window lets a call through', [], 'a', [], { admitted: true }],
    [
      'one caller alone may use the whole window (a crowd behind one address)',
      calls('nat', 9),
      'nat',
      [],
      { admitted: true },
    ],
    [
      'while nobody else wants the identity, a caller may fill its room whatever others hold',
      [...calls('a', 7, 500), ...calls('b', 2)],
      'a',
      ['a'],
      { admitted: true },
    ],
    [
      'nobody passes a full window; the wait is until its oldest call leaves it',
      [...calls('a', 5, 300), ...calls('b', 5, 100)],
      'c',
      [],
      { admitted: false, retryAfterMs: IDENTITY_WINDOW_MS - 300, reason: 'full' },
    ],
    [
      'while others want it, a caller below its share is let through',
      [...calls('a', 4, 500), ...calls('b', 1)],
      'a',
      ['b'],
      // Two callers: a share of 5 each.
      { admitted: true },
    ],
    [
      'while others want it, a caller holding its share is refused',
      [...calls('a', 5, 500), ...calls('b', 1)],
      'a',
      ['b'],
      { admitted: false, retryAfterMs: IDENTITY_WINDOW_MS - 500, reason: 'share' },
    ],
    [
      'a caller who wants it but holds nothing yet counts in the shares',
      calls('nat', 4, 500),
      'nat',
      ['user'],
      // Two callers: a share of 5; the crowd holds 4.
      { admitted: true },
    ],
    [
      'a crowd holding its share while another caller waits is refused until its oldest call leaves',
      calls('nat', 5, 400),
      'nat',
      ['user', 'nat'],
      { admitted: false, retryAfterMs: IDENTITY_WINDOW_MS - 400, reason: 'share' },
    ],
    [
      'a caller who has asked nothing yet is let through while others want it',
      [...calls('a', 5, 500), ...calls('b', 1)],
      'c',
      ['a', 'b'],
      { admitted: true },
    ],
    [
      'many callers: each still gets one call while the window has room',
      Array.from({ length: 9 }, (_, i) => ({ at: NOW - 100, caller: `ip${i}` })),
      'newcomer',
      ['ip0', 'ip1'],
      { admitted: true },
    ],
    [
      'calls under way hold their places; with no call answered, the wait is a window',
      calls('a', 10, -5_000),
      'b',
      [],
      { admitted: false, retryAfterMs: IDENTITY_WINDOW_MS, reason: 'full' },
    ],
    [
      'calls older than the window are not counted',
      calls('a', 10, IDENTITY_WINDOW_MS),
      'a',
      ['b'],
      { admitted: true },
    ],
  ])('%s', (_name, entries, caller, wanting, expected) => {
    expect(decideInWindow(entries, caller, 10, NOW, wanting)).toEqual(expected);
  });

  it('keeps every window of its length at the limit, however the callers ask', async () => {
    // 20 callers asking every 5 ms for 3 windows: no window ever holds more than the limit.
    let clock = 0;
    const windows = new LocalIdentityWindows(() => clock);
    const admitted: number[] = [];
    const identity = { key: 'bot', label: 'the bot token', perSecond: 50 };
    for (clock = 0; clock < 3 * IDENTITY_WINDOW_MS; clock += 5) {
      for (let caller = 0; caller < 20; caller++) {
        const taken = await windows.take(identity, `user:${caller}`, 50);
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

  it('holds a crowd to its share for a window once another caller was refused room', async () => {
    let clock = 0;
    const windows = new LocalIdentityWindows(() => clock);
    const identity = { key: 'client', label: 'the token endpoint', perSecond: 4 };
    const take = async (caller: string): Promise<boolean> => {
      const taken = await windows.take(identity, caller, 4);
      if (taken.admitted) taken.place.done();
      return taken.admitted;
    };
    // Alone, the crowd fills the window.
    expect(await Promise.all([1, 2, 3, 4].map(() => take('nat')))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    clock = 500;
    expect(await windows.take(identity, 'user', 4)).toMatchObject({ reason: 'full' });
    // The window empties; the user still wants it: the crowd gets its share, 2 of 4.
    clock = IDENTITY_WINDOW_MS;
    expect(await take('nat')).toBe(true);
    expect(await take('nat')).toBe(true);
    expect(await windows.take(identity, 'nat', 4)).toMatchObject({ reason: 'share' });
    expect(await take('user')).toBe(true);
    // A window after its last refusal, nobody else wants it: the crowd may fill the room again.
    clock = 2 * IDENTITY_WINDOW_MS;
    expect(await Promise.all([1, 2, 3].map(() => take('nat')))).toEqual([true, true, true]);
  });

  it('holds a place until a window after its answer, however long the call took', async () => {
    let clock = 0;
    const windows = new LocalIdentityWindows(() => clock);
    const identity = { key: 'client', label: 'the token endpoint', perSecond: 2 };
    const first = await windows.take(identity, 'a', 2);
    const second = await windows.take(identity, 'b', 2);
    if (!first.admitted || !second.admitted) throw new Error('both fit an empty window');
    clock = 5_000;
    // Both still under way: no room, whatever the time.
    expect(await windows.take(identity, 'c', 2)).toMatchObject({ admitted: false });
    first.place.done();
    clock = 5_000 + IDENTITY_WINDOW_MS - 1;
    expect(await windows.take(identity, 'c', 2)).toMatchObject({
      admitted: false,
      retryAfterMs: 1,
    });
    clock = 5_000 + IDENTITY_WINDOW_MS;
    expect(await windows.take(identity, 'c', 2)).toMatchObject({ admitted: true });
  });

  it('frees a place given back at once: the call never reached the platform', async () => {
    let clock = 0;
    const windows = new LocalIdentityWindows(() => clock);
    const identity = { key: 'client', label: 'the token endpoint', perSecond: 2 };
    const first = await windows.take(identity, 'a', 2);
    const second = await windows.take(identity, 'b', 2);
    if (!first.admitted || !second.admitted) throw new Error('both fit an empty window');
    expect(await windows.take(identity, 'c', 2)).toMatchObject({ admitted: false });
    // Refused before the wire (by its bucket's queue): no second at the platform counts it.
    first.place.giveBack();
    clock = 1;
    expect(await windows.take(identity, 'c', 2)).toMatchObject({ admitted: true });
    // Given back after it was answered, a place still leaves only a window after its answer.
    second.place.done();
    second.place.giveBack();
    expect(await windows.take(identity, 'd', 2)).toMatchObject({ admitted: false });
  });
});
