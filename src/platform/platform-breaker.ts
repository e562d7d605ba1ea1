/**
 * The circuit breaker in front of the platform's transport (docs/platform.md, "When the platform is
 * down"): once the platform is seen down, calls are refused at once (`PlatformUnavailableError`, a
 * 500 with `Retry-After`) instead of each waiting out its timeouts and retries, while one call at a
 * time, at most once a `probeIntervalMs`, goes through to see whether it is back.
 *
 * A small state machine of pure functions rather than a library such as `opossum`: the transport
 * (`@discordjs/rest`) hands a 5xx back as an answer, not a rejection, and an attempt ends one of
 * three ways — the platform answered (any 2xx–4xx, its 429s included), it is down (a network error,
 * a timeout, a 5xx), or nothing was learnt (refused here before the wire: an identity's rate, the
 * invalid-request budget, a REST proxy's own 429). opossum knows two outcomes, counts a filtered
 * error as a success (a local refusal would close a half-open breaker) and opens on a rate over a
 * rolling window, which still holds the outage's failures after recovery.
 *
 * The breaker is per instance: each instance sees the platform down by its own calls, and probes it
 * on its own (docs/operations.md, "Faults").
 */

export interface BreakerSettings {
  /** Consecutive attempts that found the platform down before calls are refused. */
  failureThreshold: number;
  /** While open, the soonest next probe after the breaker opened or a probe failed, ms. */
  probeIntervalMs: number;
  /**
   * A probe that has not been settled after this long no longer holds the others back (the
   * transport's timeout ends any attempt long before), ms.
   */
  probeStaleMs: number;
}

export type BreakerState =
  /** Calls go through; `failures` consecutive attempts found the platform down. */
  | { kind: 'closed'; failures: number }
  /** Calls are refused; a probe may go at `since + probeIntervalMs`. */
  | { kind: 'open'; since: number }
  /** One probe is on the wire since `probeSince`; the others are refused. */
  | { kind: 'half_open'; probeSince: number };

/** What one attempt showed of the platform. */
export type AttemptVerdict =
  /** The platform answered (2xx, 3xx, 4xx, its own 429 included). */
  | 'up'
  /** A network error, a timeout, a 5xx: the platform itself is down or failing. */
  | 'down'
  /** Nothing was learnt: the attempt was refused here, or a REST proxy answered for itself. */
  | 'unknown';

export const CLOSED: BreakerState = { kind: 'closed', failures: 0 };

/** Whether a call would be refused now, without taking a probe's turn (for calls about to queue). */
export function refuses(state: BreakerState, now: number, settings: BreakerSettings): boolean {
  switch (state.kind) {
    case 'closed':
      return false;
    case 'open':
      return now - state.since < settings.probeIntervalMs;
    case 'half_open':
      return now - state.probeSince < settings.probeStaleMs;
  }
}

/**
 * An attempt asks to go on the wire: `admitted` false refuses it; a `probe` is the one attempt let
 * through while the platform is known down.
 */
export function admit(
  state: BreakerState,
  now: number,
  settings: BreakerSettings,
): { admitted: boolean; probe: boolean; state: BreakerState } {
  if (state.kind === 'closed') return { admitted: true, probe: false, state };
  if (refuses(state, now, settings)) return { admitted: false, probe: false, state };
  return { admitted: true, probe: true, state: { kind: 'half_open', probeSince: now } };
}

/** The breaker after an admitted attempt ended with `verdict`; `probe` as `admit` said. */
export function settle(
  state: BreakerState,
  verdict: AttemptVerdict,
  probe: boolean,
  now: number,
  settings: BreakerSettings,
): BreakerState {
  if (verdict === 'up') return CLOSED;
  if (state.kind === 'closed') {
    if (verdict === 'unknown') return state;
    const failures = state.failures + 1;
    return failures >= settings.failureThreshold
      ? { kind: 'open', since: now }
      : { kind: 'closed', failures };
  }
  // A call admitted before the breaker opened changes nothing more: only the probe does.
  if (!probe || state.kind !== 'half_open') return state;
  // A failed probe waits a whole interval; one that learnt nothing leaves the turn to the next.
  return verdict === 'down'
    ? { kind: 'open', since: now }
    : { kind: 'open', since: now - settings.probeIntervalMs };
}
