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

/** A call let through, or refused with the wait after which it may be let through. */
export type WindowVerdict =
  { admitted: true } | { admitted: false; retryAfterMs: number; reason: 'full' | 'share' };

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
 *   identity from everyone else, and a caller who holds little of it still finds room.
 *
 * The wait of a refused call is until the oldest answered call concerned leaves the window, or a
 * window when all of them are still under way. `entries` may hold calls older than the window;
 * they are not counted.
 */
export function decideInWindow(
  entries: readonly WindowEntry[],
  caller: string,
  limit: number,
  now: number,
  wanting: readonly string[] = [],
  windowMs: number = IDENTITY_WINDOW_MS,
): WindowVerdict {
  const live = entries.filter((entry) => entry.at > now - windowMs);
  if (live.length >= limit) {
    return { admitted: false, retryAfterMs: waitFor(live, now, windowMs), reason: 'full' };
  }
  const others = wanting.filter((who) => who !== caller);
  if (others.length === 0) return { admitted: true };
  const callers = new Set([...live.map((entry) => entry.caller), ...others]).add(caller);
  const share = Math.ceil(limit / callers.size);
  const mine = live.filter((entry) => entry.caller === caller);
  if (mine.length < share) return { admitted: true };
  return { admitted: false, retryAfterMs: waitFor(mine, now, windowMs), reason: 'share' };
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
   * Decides one call of `caller` and, when it is let through, holds its place in the window; when
   * it is refused, marks its caller as wanting the identity for a window.
   */
  take(identity: IdentityId, caller: string, limit: number): Promise<WindowTake>;
}

/**
 * The windows of one instance, for a service without Redis (and while Redis cannot be reached).
 * Memory: an identity's window holds at most its limit of entries, and its callers wanting it
 * those refused in the last window.
 */
export class LocalIdentityWindows implements IdentityWindows {
  private readonly windows = new Map<string, WindowEntry[]>();
  /** Per identity: each caller refused room, until when it counts as wanting it. */
  private readonly wanting = new Map<string, Map<string, number>>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  take(identity: IdentityId, caller: string, limit: number): Promise<WindowTake> {
    const now = this.now();
    const entries = (this.windows.get(identity.key) ?? []).filter(
      (entry) => entry.at > now - IDENTITY_WINDOW_MS,
    );
    this.windows.set(identity.key, entries);
    const wanting = this.wanting.get(identity.key) ?? new Map<string, number>();
    this.wanting.set(identity.key, wanting);
    for (const [who, until] of wanting) if (until <= now) wanting.delete(who);
    const verdict = decideInWindow(entries, caller, limit, now, [...wanting.keys()]);
    if (!verdict.admitted) {
      wanting.set(caller, now + IDENTITY_WINDOW_MS);
      return Promise.resolve(verdict);
    }
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
