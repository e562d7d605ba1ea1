import { Logger } from '@nestjs/common';
import { SERVICE_CALLER } from 'src/common/http/request-context';
import { BucketBusyError, callsAhead, callsWaiting, noTurnWithin } from 'src/platform/bucket-queue';
import { CallerUsage } from 'src/platform/caller-usage';
import {
  IDENTITY_WINDOW_MS,
  LocalIdentityWindows,
  type IdentityId,
  type IdentityWindows,
  type WindowPlace,
  type WindowTake,
} from 'src/platform/identity-window';

/** The service's own calls wait this many times `maxWaitMs` at most. */
const SERVICE_HOLD_FACTOR = 5;
/**
 * Calls waiting for room on this instance, all identities together, at most: past it a call that
 * would wait is refused at once (every queue has a bound, whoever fills it).
 */
export const MAX_IDENTITY_WAITERS = 1_000;
/** While the fleet's windows cannot be reached, that is logged at most this often. */
const LOG_INTERVAL_MS = 60_000;

export interface IdentityLimiterOptions {
  /** A call that would wait longer for room is refused at once (PLATFORM_QUEUE_MAX_WAIT_MS). */
  maxWaitMs: number;
  /** The fleet's windows (Redis); without them, this instance's own hold the whole rate. */
  fleet?: IdentityWindows;
  /**
   * Instances in the fleet as last seen, for this instance's share of a rate while the fleet's
   * windows cannot be reached.
   */
  fleetSize?: () => number;
  now?: () => number;
}

interface Waiter {
  caller: string;
  seq: number;
  /** Not tried again before this (its own calls fill its share until then). */
  notBefore: number;
  admit: (place: WindowPlace) => void;
  refuse: (error: BucketBusyError) => void;
}

interface IdentityState {
  waiting: Waiter[];
  /** Calls asked per caller in the last minute or two. */
  usage: CallerUsage;
  timer: NodeJS.Timeout | null;
  /** When `timer` fires. */
  timerAt: number;
  pumping: boolean;
  /** A wake-up came while the waiters were being let through: they are looked at again after. */
  again: boolean;
}

/**
 * Holds each platform identity the fleet shares (the bot token's 50 calls a second, the token
 * endpoint's) to its rate, as calls leave for the platform: every request on the wire, retries
 * included, takes room in the identity's window first (docs/request-costs.md, "Shared platform
 * identities"). The window is the fleet's in Redis, else this instance's.
 *
 * Fair between callers: while other callers want the identity (they were refused room lately, on
 * any instance), a caller holds at most its share of the window (`decideInWindow`); while none
 * does, one caller may use all of it. A call that finds no room waits here, never past
 * `maxWaitMs`; while calls wait, room goes first to the caller who asked the least of the identity
 * in the last minute or two (then the oldest). A call whose wait would pass `maxWaitMs` is refused
 * at once, 429 with `Retry-After` naming the identity, as is one that loses its place to a caller
 * who asked less.
 */
export class IdentityLimiter {
  private readonly logger = new Logger(IdentityLimiter.name);
  private readonly local: LocalIdentityWindows;
  private readonly states = new Map<string, IdentityState>();
  private readonly now: () => number;
  private seq = 0;
  private loggedAt = Number.NEGATIVE_INFINITY;
  private refusedCount = 0;

  constructor(private readonly options: IdentityLimiterOptions) {
    this.now = options.now ?? (() => performance.now());
    this.local = new LocalIdentityWindows(this.now);
  }

  /** Calls refused since start (for the metrics). */
  get refused(): number {
    return this.refusedCount;
  }

  /** Whether callers other than `caller` wait for room in `identity` on this instance. */
  othersWaiting(identity: IdentityId, caller: string): boolean {
    return (
      this.states.get(identity.key)?.waiting.some((waiter) => waiter.caller !== caller) ?? false
    );
  }

  /** Calls waiting for room now (for the metrics). */
  get waiting(): number {
    let waiting = 0;
    for (const state of this.states.values()) waiting += state.waiting.length;
    return waiting;
  }

  /**
   * Resolves with the call's place once it may leave (`done` once its answer came, or it failed),
   * or rejects with BucketBusyError (429) when it may not within `maxWaitMs`.
   */
  async acquire(identity: IdentityId, caller: string): Promise<WindowPlace> {
    const state = this.state(identity.key);
    state.usage.count(caller);
    if (state.waiting.length === 0) {
      const verdict = await this.take(identity, caller);
      if (verdict.admitted) return verdict.place;
      if (this.asksTooMuch(identity, state, caller, verdict)) {
        throw this.overShare(identity, verdict.retryAfterMs);
      }
      this.checkWait(identity, state, caller, verdict.retryAfterMs);
      return this.wait(identity, state, caller, this.now() + verdict.retryAfterMs);
    }
    this.checkWait(identity, state, caller, 0);
    return this.wait(identity, state, caller, this.now());
  }

  /**
   * Takes room in the fleet's window, or this instance's share of the rate while it is out of
   * reach.
   */
  private async take(identity: IdentityId, caller: string): Promise<WindowTake> {
    const { fleet } = this.options;
    if (fleet) {
      try {
        return await fleet.take(identity, caller, identity.perSecond);
      } catch (error) {
        this.warn(error);
        const share = Math.floor(identity.perSecond / Math.max(1, this.options.fleetSize?.() ?? 1));
        return this.local.take(identity, caller, Math.max(1, share));
      }
    }
    return this.local.take(identity, caller, identity.perSecond);
  }

  /**
   * Refuses a call at once when the calls that would go before it (those of callers who asked no
   * more of the identity) could not all leave within `maxWaitMs` at its rate, after `untilRoomMs`.
   * When as many calls wait as the rate carries in `maxWaitMs`, the last waiter of the caller who
   * asked the most gives its place to this one, if that caller asked more.
   */
  private checkWait(
    identity: IdentityId,
    state: IdentityState,
    caller: string,
    untilRoomMs: number,
  ): void {
    const usage = this.usageOf(state, caller);
    const ahead = state.waiting.filter((waiter) => this.usageOf(state, waiter.caller) <= usage);
    const perCallMs = IDENTITY_WINDOW_MS / identity.perSecond;
    const estimateMs = untilRoomMs + ahead.length * perCallMs;
    const holdMs = this.holdMs(caller);
    if (estimateMs >= holdMs) {
      throw this.refuse(
        identity,
        ahead.length === 0 ? noTurnWithin(holdMs) : callsAhead(ahead.length),
        estimateMs,
      );
    }
    if (this.waiting >= MAX_IDENTITY_WAITERS) {
      throw this.refuse(identity, callsWaiting(this.waiting), IDENTITY_WINDOW_MS);
    }
    const capacity = Math.max(1, Math.floor(this.options.maxWaitMs / perCallMs));
    if (state.waiting.length < capacity || caller === SERVICE_CALLER) return;
    const heaviest = state.usage.heaviest(state.waiting);
    if (this.usageOf(state, heaviest.caller) <= usage) {
      throw this.refuse(identity, callsWaiting(state.waiting.length), estimateMs);
    }
    state.waiting.splice(state.waiting.indexOf(heaviest), 1);
    heaviest.refuse(this.refuse(identity, 'callers who used it less came first', estimateMs));
  }

  private wait(
    identity: IdentityId,
    state: IdentityState,
    caller: string,
    notBefore: number,
  ): Promise<WindowPlace> {
    return new Promise<WindowPlace>((resolve, reject) => {
      const holdMs = this.holdMs(caller);
      const deadline = setTimeout(() => {
        const index = state.waiting.indexOf(waiter);
        if (index < 0) return;
        state.waiting.splice(index, 1);
        reject(this.refuse(identity, `no room came within ${holdMs} ms`, IDENTITY_WINDOW_MS));
      }, holdMs);
      deadline.unref();
      const waiter: Waiter = {
        caller,
        seq: this.seq++,
        notBefore,
        admit: (place) => {
          clearTimeout(deadline);
          resolve(place);
        },
        refuse: (error) => {
          clearTimeout(deadline);
          reject(error);
        },
      };
      state.waiting.push(waiter);
      this.schedule(identity, state, notBefore);
    });
  }

  /** Wakes the identity's waiters at `at` (or sooner, if already due then). */
  private schedule(identity: IdentityId, state: IdentityState, at: number): void {
    if (state.timer && state.timerAt <= at) return;
    if (state.timer) clearTimeout(state.timer);
    state.timerAt = at;
    state.timer = setTimeout(
      () => {
        state.timer = null;
        void this.pump(identity, state);
      },
      Math.max(0, at - this.now()),
    );
    state.timer.unref();
  }

  /**
   * Lets waiters through, the caller who asked least first (then the oldest), while the window
   * has room; then sleeps until the window's next room, or a waiter's own.
   */
  private async pump(identity: IdentityId, state: IdentityState): Promise<void> {
    if (state.pumping) {
      // A waiter that came meanwhile is not in this pass's order: one more pass follows it.
      state.again = true;
      return;
    }
    state.pumping = true;
    state.again = false;
    let wakeAt = Number.POSITIVE_INFINITY;
    try {
      const order = [...state.waiting].sort(
        (a, b) => this.usageOf(state, a.caller) - this.usageOf(state, b.caller) || a.seq - b.seq,
      );
      for (const waiter of order) {
        if (!state.waiting.includes(waiter)) continue;
        if (waiter.notBefore > this.now()) {
          wakeAt = Math.min(wakeAt, waiter.notBefore);
          continue;
        }
        const verdict = await this.take(identity, waiter.caller);
        if (!state.waiting.includes(waiter)) {
          // Refused meanwhile (its deadline, or its place lost): the room goes back unused.
          if (verdict.admitted) verdict.place.giveBack();
          continue;
        }
        if (verdict.admitted) {
          state.waiting.splice(state.waiting.indexOf(waiter), 1);
          waiter.admit(verdict.place);
          continue;
        }
        if (this.asksTooMuch(identity, state, waiter.caller, verdict)) {
          state.waiting.splice(state.waiting.indexOf(waiter), 1);
          waiter.refuse(this.overShare(identity, verdict.retryAfterMs));
          continue;
        }
        if (verdict.reason === 'share') {
          // Its own calls fill its share: it is tried again when the oldest of them leaves.
          waiter.notBefore = this.now() + verdict.retryAfterMs;
          wakeAt = Math.min(wakeAt, waiter.notBefore);
          continue;
        }
        wakeAt = Math.min(wakeAt, this.now() + verdict.retryAfterMs);
        break;
      }
    } finally {
      state.pumping = false;
    }
    if (state.again) wakeAt = this.now();
    if (state.waiting.length > 0 && Number.isFinite(wakeAt)) this.schedule(identity, state, wakeAt);
  }

  private holdMs(caller: string): number {
    return this.options.maxWaitMs * (caller === SERVICE_CALLER ? SERVICE_HOLD_FACTOR : 1);
  }

  private state(key: string): IdentityState {
    let state = this.states.get(key);
    if (!state) {
      state = {
        waiting: [],
        usage: new CallerUsage(this.now),
        timer: null,
        timerAt: 0,
        pumping: false,
        again: false,
      };
      this.states.set(key, state);
    }
    return state;
  }

  private usageOf(state: IdentityState, caller: string): number {
    return state.usage.of(caller);
  }

  /**
   * A caller holding its share of an identity others want who has also asked more of it in the last
   * minute or two than the identity carries in a second is refused at once (a flood, not a user's
   * burst): its wait would only hold a place others need. A caller who asked less waits its turn.
   */
  private asksTooMuch(
    identity: IdentityId,
    state: IdentityState,
    caller: string,
    verdict: Exclude<WindowTake, { admitted: true }>,
  ): boolean {
    return verdict.reason === 'share' && this.usageOf(state, caller) > identity.perSecond;
  }

  private overShare(identity: IdentityId, waitMs: number): BucketBusyError {
    return this.refuse(identity, 'you hold your share of it while it is busy', waitMs);
  }

  private refuse(identity: IdentityId, reason: string, waitMs: number): BucketBusyError {
    this.refusedCount += 1;
    return new BucketBusyError(identity.label, reason, Math.max(1, Math.ceil(waitMs / 1000)));
  }

  private warn(error: unknown): void {
    const now = this.now();
    if (now - this.loggedAt < LOG_INTERVAL_MS) return;
    this.loggedAt = now;
    this.logger.warn(
      { reason: (error as Error).message },
      "Platform identities: Redis cannot be reached; each instance holds its share of each identity's rate on its own",
    );
  }
}
