import {
  admit,
  CLOSED,
  refuses,
  settle,
  type AttemptVerdict,
  type BreakerSettings,
  type BreakerState,
} from 'src/platform/platform-breaker';

const SETTINGS: BreakerSettings = {
  failureThreshold: 3,
  probeIntervalMs: 1_000,
  probeStaleMs: 30_000,
};
const NOW = 100_000;

describe('platform breaker', () => {
  describe('admit', () => {
    const cases: [string, BreakerState, number, ReturnType<typeof admit>][] = [
      [
        'closed: every call',
        { kind: 'closed', failures: 2 },
        NOW,
        {
          admitted: true,
          probe: false,
          state: { kind: 'closed', failures: 2 },
        },
      ],
      [
        'open, before the interval: refused',
        { kind: 'open', since: NOW - 999 },
        NOW,
        {
          admitted: false,
          probe: false,
          state: { kind: 'open', since: NOW - 999 },
        },
      ],
      [
        'open, after the interval: one probe',
        { kind: 'open', since: NOW - 1_000 },
        NOW,
        {
          admitted: true,
          probe: true,
          state: { kind: 'half_open', probeSince: NOW },
        },
      ],
      [
        'half-open: the others refused',
        { kind: 'half_open', probeSince: NOW - 5_000 },
        NOW,
        {
          admitted: false,
          probe: false,
          state: { kind: 'half_open', probeSince: NOW - 5_000 },
        },
      ],
      [
        'half-open, probe never settled: another probe',
        { kind: 'half_open', probeSince: NOW - 30_000 },
        NOW,
        {
          admitted: true,
          probe: true,
          state: { kind: 'half_open', probeSince: NOW },
        },
      ],
    ];
    it.each(cases)('%s', (_name, state, now, expected) => {
      expect(admit(state, now, SETTINGS)).toEqual(expected);
      expect(refuses(state, now, SETTINGS)).toBe(!expected.admitted);
    });
  });

  describe('settle', () => {
    const cases: [string, BreakerState, AttemptVerdict, boolean, BreakerState][] = [
      ['closed, up: failures forgotten', { kind: 'closed', failures: 2 }, 'up', false, CLOSED],
      [
        'closed, down: counted',
        { kind: 'closed', failures: 1 },
        'down',
        false,
        { kind: 'closed', failures: 2 },
      ],
      [
        'closed, down at the threshold: opens',
        { kind: 'closed', failures: 2 },
        'down',
        false,
        { kind: 'open', since: NOW },
      ],
      [
        'closed, unknown (refused here, a proxy 429): nothing',
        { kind: 'closed', failures: 2 },
        'unknown',
        false,
        { kind: 'closed', failures: 2 },
      ],
      [
        'half-open, probe up: closes',
        { kind: 'half_open', probeSince: NOW - 10 },
        'up',
        true,
        CLOSED,
      ],
      [
        'half-open, probe down: open for another interval',
        { kind: 'half_open', probeSince: NOW - 10 },
        'down',
        true,
        { kind: 'open', since: NOW },
      ],
      [
        'half-open, probe unknown: the next call probes',
        { kind: 'half_open', probeSince: NOW - 10 },
        'unknown',
        true,
        { kind: 'open', since: NOW - 1_000 },
      ],
      [
        'half-open, an older call down: nothing',
        { kind: 'half_open', probeSince: NOW - 10 },
        'down',
        false,
        { kind: 'half_open', probeSince: NOW - 10 },
      ],
      [
        'open, an older call down: nothing',
        { kind: 'open', since: NOW - 10 },
        'down',
        false,
        { kind: 'open', since: NOW - 10 },
      ],
      [
        'open, an older call answered: the platform is up',
        { kind: 'open', since: NOW - 10 },
        'up',
        false,
        CLOSED,
      ],
    ];
    it.each(cases)('%s', (_name, state, verdict, probe, expected) => {
      expect(settle(state, verdict, probe, NOW, SETTINGS)).toEqual(expected);
    });
  });

  it('an outage: opens, refuses, probes once, recovers', () => {
    let state: BreakerState = CLOSED;
    for (let i = 0; i < 3; i++) state = settle(state, 'down', false, NOW, SETTINGS);
    expect(admit(state, NOW + 500, SETTINGS).admitted).toBe(false);
    const probe = admit(state, NOW + 1_000, SETTINGS);
    expect(probe).toMatchObject({ admitted: true, probe: true });
    expect(admit(probe.state, NOW + 1_001, SETTINGS).admitted).toBe(false);
    state = settle(probe.state, 'up', true, NOW + 1_010, SETTINGS);
    expect(admit(state, NOW + 1_011, SETTINGS)).toMatchObject({ admitted: true, probe: false });
  });
});
