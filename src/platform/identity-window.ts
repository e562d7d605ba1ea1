/**
 * The rule every limiter of a platform identity applies (src/platform/identity-limiter.ts): the
 * in-process one here, and the fleet's in Redis (fleet-identity-windows.ts, the same rule in Lua).
 * Kept free of Nest and of clocks so it can be read against its table of cases.
 */

/**
 * The window a rate is held over. A call holds its place in it from the moment it is let through
 * until a window after its answer came (or it failed): the platform saw it arrive somewhere in
 * between, so however long the way there took, every second at the platform holds at most the
 * calls one window holds here.
 */
export const IDENTITY_WINDOW_MS = 1_000;

/**
 * A call's place while it is under way, as a time this far ahead: a place whose instance stopped
 * before giving it back is freed after this long (longer than a call takes: its timeout and the
 * transport's bounded waits).
 */
export const IN_FLIGHT_MS = 30_000;

/** Whom the platform limits as one (a token, or the address of the token endpoint's callers). */
export interface IdentityId {
  key: string;
  /** How users are told of it: "the bot token". */
  label: string;
  /** The platform's limit of the identity, calls a second. */
  perSecond: number;
}

/**
 * One call in the window, and whose: `at` is when its answer came (its place is held until a window
 * later), or a time ahead of now while it is under way.
 */
export interface WindowEntry {
  at: number;
  caller: string;
}

/**
 * A call let through, or refused with the wait after which it may be let through: the window is
 * full, the caller holds its share, or a caller who asked less waits for the room (`behind`).
 */
export type WindowVerdict =
  | { admitted: true }
  | { admitted: false; retryAfterMs: number; reason: 'full' | 'share' | 'behind' };

/**
 * Who asks for room: room goes to the caller who asked least of the identity in the last minute or
 * two. `asked` is what this instance counted (the in-process windows decide on it); the fleet's
 * windows count each call themselves, once, on its `first` take, so that a burst the load balancer
 * spread over every instance counts whole.
 */
export interface WindowAsk {
  caller: string;
  asked: number;
  first: boolean;
}

/**
 * The callers refused room and not let through since (on any instance), with what each asked when
 * it was refused (a caller refused for its share claims nothing: it could not take the room):
 * while one of them asked less than a caller, that caller waits behind it.
 */
export type WaitingAsks = ReadonlyMap<string, number>;

/**
 * Whether `caller` may make one more call now, given the calls in the window (under way, or
 * answered less than a window ago) and the callers who want the identity now (`wanting`: refused
 * room in the last window, so waiting for it, on any instance):
 *
 * - never past `limit` calls in the window (the identity's rate, for the whole fleet);
 * - while no other caller wants the identity, any call may take a place while the window has
 *   room: a crowd behind one address may use all of it;
 * - while others want it, a caller takes a place only within its share: the limit divided among
 *   the callers in the window and those wanting it, itself included (rounded up: at least one call
 *   each, and the window can still fill). Neither a few accounts nor many addresses can take the
 *   identity from everyone else, and a caller who holds little of it still finds room;
 * - and while a caller who asked less of the identity waits for room (`waiting`), a caller who
 *   asked more takes none: the room that comes goes to the lighter caller, whichever instance asks
 *   for it first. A burst of made-up codes from one address (ten asked) waits behind a login (one).
 *   Its wait is a place's time at the rate; the lighter caller's claim ends when it is let through,
 *   or a window after its last refusal.
 *
 * The wait of a refused call is until the oldest answered call concerned leaves the window, or a
 * window when all of them are still under way. `entries` may hold calls older than the window;
 * they are not counted.
 */
export function decideInWindow(
  entries: readonly WindowEntry[],
  ask: Pick<WindowAsk, 'caller' | 'asked'>,
  limit: number,
  now: number,
  wanting: readonly string[] = [],
  waiting: WaitingAsks = new Map(),
  windowMs: number = IDENTITY_WINDOW_MS,
): WindowVerdict {
  const { caller, asked } = ask;
  const live = entries.filter((entry) => entry.at > now - windowMs);
  if (live.length >= limit) {
    return { admitted: false, retryAfterMs: waitFor(live, now, windowMs), reason: 'full' };
  }
  const others = wanting.filter((who) => who !== caller);
  if (others.length === 0) return { admitted: true };
  const callers = new Set([...live.map((entry) => entry.caller), ...others]).add(caller);
  const share = Math.ceil(limit / callers.size);
  const mine = live.filter((entry) => entry.caller === caller);
  if (mine.length >= share) {
    return { admitted: false, retryAfterMs: waitFor(mine, now, windowMs), reason: 'share' };
  }
  for (const [who, theirs] of waiting) {
    if (who !== caller && theirs < asked) {
      return { admitted: false, retryAfterMs: Math.ceil(windowMs / limit), reason: 'behind' };
    }
  }
  return { admitted: true };
}

/** Until the oldest answered call leaves the window; a window if every call is under way. */
function waitFor(entries: readonly WindowEntry[], now: number, windowMs: number): number {
  const answered = entries.filter((entry) => entry.at <= now).map((entry) => entry.at);
  if (answered.length === 0) return windowMs;
  return Math.max(1, Math.min(...answered) + windowMs - now);
}

/**
 * A place taken in an identity's window: `done` when the call's answer came, or it failed (it leaves
 * a window later); `giveBack` when the call never left (refused before the wire): it leaves now.
 * Once `done`, `giveBack` changes nothing.
 */
export interface WindowPlace {
  done(): void;
  giveBack(): void;
}

/** What taking a place answers: the place, or the refusal. */
export type WindowTake =
  { admitted: true; place: WindowPlace } | Exclude<WindowVerdict, { admitted: true }>;

/** Where an identity's window is kept: in process, or in Redis for the fleet. */
export interface IdentityWindows {
  /**
   * Decides one call of `ask.caller` and, when it is let through, holds its place in the window
   * (and ends the caller's claim to room); when it is refused, marks its caller as wanting the
   * identity for a window, with what it asked.
   */
  take(identity: IdentityId, ask: WindowAsk, limit: number): Promise<WindowTake>;
}

/**
 * The windows of one instance, for a service without Redis (and while Redis cannot be reached).
 * Memory: an identity's window holds at most its limit of entries, and its callers wanting it
 * those refused in the last window.
 */
export class LocalIdentityWindows implements IdentityWindows {
  private readonly windows = new Map<string, WindowEntry[]>();
  /**
   * Per identity: each caller refused room, until when it counts as wanting it, and what it had
   * asked (dropped when it is let through).
   */
  private readonly wanting = new Map<
    string,
    Map<string, { until: number; asked: number | null }>
  >();

  constructor(private readonly now: () => number = () => performance.now()) {}

  take(identity: IdentityId, ask: WindowAsk, limit: number): Promise<WindowTake> {
    const now = this.now();
    const { caller } = ask;
    const entries = (this.windows.get(identity.key) ?? []).filter(
      (entry) => entry.at > now - IDENTITY_WINDOW_MS,
    );
    this.windows.set(identity.key, entries);
    const wanting =
      this.wanting.get(identity.key) ?? new Map<string, { until: number; asked: number | null }>();
    this.wanting.set(identity.key, wanting);
    const waiting = new Map<string, number>();
    for (const [who, mark] of wanting) {
      if (mark.until <= now) wanting.delete(who);
      else if (mark.asked !== null) waiting.set(who, mark.asked);
    }
    const verdict = decideInWindow(entries, ask, limit, now, [...wanting.keys()], waiting);
    if (!verdict.admitted) {
      // A caller past its share claims no room: it could not take it.
      const asked = verdict.reason === 'share' ? null : ask.asked;
      wanting.set(caller, { until: now + IDENTITY_WINDOW_MS, asked });
      return Promise.resolve(verdict);
    }
    const mark = wanting.get(caller);
    if (mark) mark.asked = null;
    const entry = { at: now + IN_FLIGHT_MS, caller };
    entries.push(entry);
    let answered = false;
    return Promise.resolve({
      admitted: true,
      place: {
        done: () => {
          answered = true;
          entry.at = Math.min(entry.at, this.now());
        },
        giveBack: () => {
          // Dated before every window, the next take drops it; an answered call's place stays.
          if (!answered) entry.at = Number.NEGATIVE_INFINITY;
        },
      },
    });
  }
}
