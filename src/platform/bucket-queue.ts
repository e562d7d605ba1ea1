import { AppException } from 'src/common/errors/app.exception';
import { SERVICE_CALLER } from 'src/common/http/request-context';
import { ErrorCode } from 'src/common/errors/error-code';
import { CallerUsage, USAGE_WINDOW_MS } from 'src/platform/caller-usage';
import type { IdentityId } from 'src/platform/identity-window';

export type { IdentityId } from 'src/platform/identity-window';

/** The bounds of every shared platform bucket's queue (docs/request-costs.md, "Shared platform buckets"). */
export interface BucketQueueLimits {
  /**
   * A call whose wait for its turn, estimated from how long the bucket's recent calls took, would
   * be longer is refused at once, and one still waiting after this long is refused then
   * (PLATFORM_QUEUE_MAX_WAIT_MS).
   */
  maxWaitMs: number;
  /** Calls waiting in one bucket at most; past it, the caller who used the bucket most loses its place. */
  maxWaiting: number;
  /** Calls one caller may have waiting or under way in one bucket while others wait in it. */
  perCaller: number;
  /** Calls waiting in all buckets of this instance at most; past it a call that would wait is refused. */
  maxWaitingInAll: number;
}

/** The bounds but the wait (PLATFORM_QUEUE_MAX_WAIT_MS, validated by the configuration). */
export const DEFAULT_BUCKET_QUEUE_LIMITS: Omit<BucketQueueLimits, 'maxWaitMs'> = {
  maxWaiting: 20,
  // Two settings writes of one user at once, each looking up 5 members of a guild side by side.
  perCaller: 10,
  maxWaitingInAll: 1_000,
};

/** The service's own calls wait for their turn this many times maxWaitMs at most. */
const SERVICE_HOLD_FACTOR = 5;

/** Calls a bucket lets wait before it has timed one: its estimate starts at maxWaitMs / this. */
const FIRST_WAITERS = 5;

/** Weight of the newest call in a bucket's estimate of how long a call takes. */
const SERVICE_EWMA = 0.5;

/** A refusal's reason in words: "1 call is waiting for it", "3 calls are waiting for it". */
export function callsWaiting(count: number, forWhat = 'it'): string {
  return count === 1
    ? `1 call is waiting for ${forWhat}`
    : `${count} calls are waiting for ${forWhat}`;
}

/** A refusal's reason in words: "1 call is ahead of yours", "3 calls are ahead of yours". */
export function callsAhead(count: number): string {
  return count === 1 ? '1 call is ahead of yours' : `${count} calls are ahead of yours`;
}

/** The reason of a call refused with nobody ahead of it: its turn is further than it may wait. */
export function noTurnWithin(maxWaitMs: number): string {
  return `no turn would come within ${maxWaitMs} ms`;
}

/**
 * 429 `RateLimited`: a shared platform bucket's queue refused the call, with the bucket named and
 * `Retry-After`.
 */
export class BucketBusyError extends AppException {
  constructor(
    readonly bucket: string,
    reason: string,
    readonly retryAfterSeconds: number,
  ) {
    super(
      ErrorCode.RateLimited,
      `The chat platform's rate limit for ${bucket} is shared by every user of this service and ${reason}; retry in ${retryAfterSeconds} seconds`,
    );
    this.name = 'BucketBusyError';
    this.headers = { 'Retry-After': retryAfterSeconds };
  }
}

/** What a queue may ask beyond this instance (FleetBucketSlots): the fleet's view of a caller. */
export interface BucketFleet {
  /** Takes a place for the call in the fleet; false when `caller` already holds `perCaller`. */
  enter(bucket: string, caller: string, perCaller: number): Promise<FleetPlace | null>;
}

/** A place held in the fleet's count, given back when the call ends. */
export interface FleetPlace {
  leave(): void;
}

interface Waiter {
  caller: string;
  /** The identity its bucket belongs to. */
  identity: string;
  seq: number;
  start: () => void;
  refuse: (error: BucketBusyError) => void;
}

interface Bucket {
  label: string;
  busy: boolean;
  waiting: Waiter[];
  /**
   * Calls admitted and not yet in line: waiting for their place in the fleet (Redis). Counted as
   * ahead of a newcomer, so calls arriving meanwhile do not all find the bucket idle.
   */
  entering: number;
  /** The callers of the calls entering, and how many each. */
  enteringBy: Map<string, number>;
  /** Calls of each caller waiting or under way. */
  held: Map<string, number>;
  /** Calls asked per caller in the last minute or two. */
  usage: CallerUsage;
  /**
   * How long the bucket takes per call, recent calls weighted most (ms): a call's duration, or
   * while calls queue, the time between one call's start and the next's (the platform's rate).
   * 0 until a call has ended.
   */
  serviceMs: number;
  /** When the last call was handed to the transport. */
  lastStartAt: number;
  /** Calls the platform said the bucket has left (`X-RateLimit-Remaining`), null when unknown. */
  remaining: number | null;
  /** When the platform said the bucket resets (`X-RateLimit-Reset-After`), on this queue's clock. */
  resetAt: number;
  /** The wake-up at `resetAt` that hands the bucket to the next waiter. */
  resetTimer: NodeJS.Timeout | null;
}

/**
 * What the platform said of the bucket in a call's answer, filled by the call (PlatformHttp reads
 * it from the rate-limit headers) and read by the queue when the call ends.
 */
export interface BucketObservation {
  remaining?: number;
  resetAfterMs?: number;
}

/** One call to queue: its bucket, the identity the bucket belongs to, and who it is charged to. */
export interface QueuedCall {
  /** The bucket: identity, route and top-level id. */
  key: string;
  /** How users are told of the bucket: `GET /users/@me/guilds`. */
  label: string;
  identity: IdentityId;
  caller: string;
  /** Filled by the task with what the platform said of the bucket. */
  observed?: BucketObservation;
}

export interface BucketQueueStats {
  buckets: number;
  waiting: number;
  refused: number;
}

/**
 * Fair, bounded queues in front of the platform buckets the whole service shares (the bot token's,
 * the OAuth2 client's): one call at a time per bucket goes to the transport, which then waits out
 * the platform's own limit (it runs one call at a time per bucket too, so nothing is lost). The
 * next call is the one whose caller used the bucket least in the last minute or two (then the
 * oldest), so one caller's burst cannot keep others waiting behind it. A call that would wait is
 * refused at once, 429 with `Retry-After`, while `maxWaitingInAll` calls wait on the instance; and
 * while other callers wait in the bucket, when its caller already holds `perCaller` calls of it or
 * its estimated wait is longer than `maxWaitMs`, or when it loses its place to a caller who used
 * the bucket less. A caller alone in the line queues; none waits more than `maxWaitMs`.
 * docs/request-costs.md, "Shared platform buckets".
 */
export class BucketQueues {
  private readonly buckets = new Map<string, Bucket>();
  /**
   * Calls under way or waiting per identity, in all its buckets, and per caller; and the calls
   * waiting for a turn per caller.
   */
  private readonly identities = new Map<
    string,
    { outstanding: number; byCaller: Map<string, number>; waiting: Map<string, number> }
  >();
  /** Calls waiting for a turn, all buckets together. */
  private waitingCount = 0;
  private seq = 0;
  private refusedCount = 0;
  private sweptAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly limits: BucketQueueLimits,
    private readonly now: () => number = () => performance.now(),
    private readonly fleet?: BucketFleet,
    /** Told how long each call let through waited for its turn, in ms (the wait metric). */
    private readonly waited: (ms: number) => void = () => undefined,
    /**
     * Whether callers other than `caller` wait for room in the identity's rate (IdentityLimiter):
     * they want the identity as much as those waiting for a turn here.
     */
    private readonly othersWantIdentity: (identity: IdentityId, caller: string) => boolean = () =>
      false,
  ) {}

  /**
   * Runs `task` when it is the caller's turn in its bucket's queue, or refuses with
   * BucketBusyError (the bucket's bounds, or its identity's).
   */
  async run<T>(call: QueuedCall, task: () => Promise<T>): Promise<T> {
    const { key, label, caller } = call;
    const bucket = this.bucket(key, label);
    // Usage is what a caller asks of the bucket, served or not: a flood ranks its sender last.
    bucket.usage.count(caller);
    const held = bucket.held.get(caller) ?? 0;
    // The service's own work (timers, the CLI, the bot's reports) is bounded where it is written:
    // it waits its turn, but is not refused for a long queue (the identity's bound still holds).
    const bounded = caller !== SERVICE_CALLER;
    // A caller's share is held while others wait for the bucket too: a crowd behind one address
    // (a NAT) is not refused while nobody else is kept waiting by it; its calls queue.
    const shared = this.othersWait(bucket, caller);
    if (held >= this.limits.perCaller && bounded && shared) {
      throw this.refuse(bucket, `you already have ${held} calls waiting for it`);
    }
    const identity = this.enterIdentity(call, bounded);
    try {
      if (bounded) this.admit(bucket, caller, shared);
    } catch (error) {
      this.leaveIdentity(call.identity, caller);
      throw error;
    }
    bucket.held.set(caller, held + 1);
    let place: FleetPlace | null = null;
    try {
      if (bounded && this.fleet) {
        bucket.entering += 1;
        bucket.enteringBy.set(caller, (bucket.enteringBy.get(caller) ?? 0) + 1);
        try {
          // Alone in this instance's line, the caller's places are still counted for the others,
          // but not limited past what the instance lets wait.
          place = await this.fleet.enter(
            key,
            caller,
            shared ? this.limits.perCaller : this.limits.maxWaitingInAll,
          );
        } finally {
          bucket.entering -= 1;
          const entering = (bucket.enteringBy.get(caller) ?? 1) - 1;
          if (entering > 0) bucket.enteringBy.set(caller, entering);
          else bucket.enteringBy.delete(caller);
        }
        if (!place) {
          throw this.refuse(
            bucket,
            `you already have ${this.limits.perCaller} calls waiting for it`,
          );
        }
      }
      const entered = this.now();
      await this.turn(bucket, caller, call.identity.key);
      this.waited(this.now() - entered);
    } catch (error) {
      place?.leave();
      this.release(key, bucket, caller);
      this.leaveIdentity(identity, caller);
      throw error;
    }
    const started = this.now();
    try {
      return await task();
    } finally {
      place?.leave();
      this.observe(bucket, this.now() - started, call.observed);
      bucket.busy = false;
      this.release(key, bucket, caller);
      this.leaveIdentity(identity, caller);
      this.next(bucket);
    }
  }

  /**
   * Counts the call against its identity (all of its buckets together): refused when the caller
   * holds twice its per-bucket share across the identity's buckets while other callers wait for it
   * (for a turn in one of its buckets, or for room in its rate). The identity's rate is held where
   * calls leave, by IdentityLimiter (a bound on calls under way is no rate, and refused first come
   * first served).
   */
  private enterIdentity(call: QueuedCall, bounded: boolean): IdentityId {
    const { identity, caller } = call;
    const state = this.identityState(identity.key);
    const mine = state.byCaller.get(caller) ?? 0;
    if (
      bounded &&
      mine >= 2 * this.limits.perCaller &&
      (state.waiting.size - (state.waiting.has(caller) ? 1 : 0) > 0 ||
        this.othersWantIdentity(identity, caller))
    ) {
      this.refusedCount += 1;
      throw new BucketBusyError(
        identity.label,
        `you already have ${mine} calls under way or waiting for it`,
        Math.max(1, Math.ceil(state.outstanding / identity.perSecond)),
      );
    }
    state.outstanding += 1;
    state.byCaller.set(caller, mine + 1);
    return identity;
  }

  private identityState(key: string): {
    outstanding: number;
    byCaller: Map<string, number>;
    waiting: Map<string, number>;
  } {
    let state = this.identities.get(key);
    if (!state) {
      state = { outstanding: 0, byCaller: new Map(), waiting: new Map() };
      this.identities.set(key, state);
    }
    return state;
  }

  /** Puts a waiter in its bucket's line. */
  private enqueue(bucket: Bucket, waiter: Waiter): void {
    bucket.waiting.push(waiter);
    this.waitingCount += 1;
    const { waiting } = this.identityState(waiter.identity);
    waiting.set(waiter.caller, (waiting.get(waiter.caller) ?? 0) + 1);
  }

  /** Takes a waiter out of its bucket's line (its turn came, or it was refused). */
  private dequeue(bucket: Bucket, waiter: Waiter): void {
    const index = bucket.waiting.indexOf(waiter);
    if (index < 0) return;
    bucket.waiting.splice(index, 1);
    this.waitingCount -= 1;
    const { waiting } = this.identityState(waiter.identity);
    const left = (waiting.get(waiter.caller) ?? 1) - 1;
    if (left > 0) waiting.set(waiter.caller, left);
    else waiting.delete(waiter.caller);
  }

  private leaveIdentity(identity: IdentityId, caller: string): void {
    const state = this.identities.get(identity.key);
    if (!state) return;
    state.outstanding -= 1;
    const mine = (state.byCaller.get(caller) ?? 1) - 1;
    if (mine > 0) state.byCaller.set(caller, mine);
    else state.byCaller.delete(caller);
  }

  stats(): BucketQueueStats {
    return { buckets: this.buckets.size, waiting: this.waitingCount, refused: this.refusedCount };
  }

  /** Whether callers other than `caller` wait for a turn in the bucket (or are entering its line). */
  private othersWait(bucket: Bucket, caller: string): boolean {
    return (
      bucket.enteringBy.size - (bucket.enteringBy.has(caller) ? 1 : 0) > 0 ||
      bucket.waiting.some((waiter) => waiter.caller !== caller)
    );
  }

  /**
   * Refuses the call if it would wait while the instance's waiting calls are at their bound, or,
   * while others wait for the bucket (`shared`), if its wait would be too long (after taking a
   * place from a heavier caller). A caller alone in the line queues: its wait is bounded by
   * `maxWaitMs` alone.
   */
  private admit(bucket: Bucket, caller: string, shared: boolean): void {
    const untilReset = this.exhausted(bucket) ? bucket.resetAt - this.now() : 0;
    const idle = !bucket.busy && bucket.waiting.length === 0 && bucket.entering === 0;
    if (idle && untilReset === 0) return;
    if (this.waitingCount >= this.limits.maxWaitingInAll) {
      throw this.refuse(
        bucket,
        callsWaiting(this.waitingCount, 'the platform'),
        this.limits.maxWaitMs,
      );
    }
    if (!shared) return;
    const usage = this.usageOf(bucket, caller);
    // Waiters that would go first: those of callers who used the bucket no more than this one
    // (the oldest goes first among equals), and the calls still entering the line (of which one
    // runs at once if the bucket is free).
    const running = bucket.busy || bucket.entering > 0 ? 1 : 0;
    const ahead =
      bucket.waiting.filter((waiter) => this.usageOf(bucket, waiter.caller) <= usage).length +
      bucket.entering -
      (bucket.busy ? 0 : Math.min(1, bucket.entering));
    const perCall = bucket.serviceMs || this.limits.maxWaitMs / FIRST_WAITERS;
    const estimateMs = untilReset + (ahead + running) * perCall;
    if (ahead >= this.limits.maxWaiting || estimateMs >= this.limits.maxWaitMs) {
      throw this.refuse(
        bucket,
        ahead === 0 ? noTurnWithin(this.limits.maxWaitMs) : callsWaiting(ahead),
        estimateMs,
      );
    }
    if (bucket.waiting.length < this.limits.maxWaiting) return;
    // Full: the last waiter of the caller who used the bucket most gives up its place, if that
    // caller used it more than this one.
    const heaviest = bucket.usage.heaviest(bucket.waiting);
    if (this.usageOf(bucket, heaviest.caller) <= usage) {
      throw this.refuse(bucket, callsWaiting(bucket.waiting.length), estimateMs);
    }
    this.dequeue(bucket, heaviest);
    heaviest.refuse(this.refuse(bucket, 'callers who used it less came first', estimateMs));
  }

  private turn(bucket: Bucket, caller: string, identity: string): Promise<void> {
    if (!bucket.busy && bucket.waiting.length === 0 && !this.exhausted(bucket)) {
      this.start(bucket);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      // The service's own work was not refused for the queue's length: it may wait longer.
      const holdMs = this.limits.maxWaitMs * (caller === SERVICE_CALLER ? SERVICE_HOLD_FACTOR : 1);
      const timer = setTimeout(() => {
        if (!bucket.waiting.includes(waiter)) return;
        this.dequeue(bucket, waiter);
        reject(this.refuse(bucket, `no turn came within ${holdMs} ms`));
      }, holdMs);
      timer.unref();
      const waiter: Waiter = {
        caller,
        identity,
        seq: this.seq++,
        start: () => {
          clearTimeout(timer);
          resolve();
        },
        refuse: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.enqueue(bucket, waiter);
      // An exhausted bucket with no call under way: the reset hands it on.
      this.next(bucket);
    });
  }

  /** Hands the bucket to the waiter whose caller used it least (then the oldest). */
  private next(bucket: Bucket): void {
    if (bucket.busy || bucket.waiting.length === 0) return;
    if (this.exhausted(bucket)) {
      // The platform said the bucket is spent: the waiters wait here, not in the transport, so
      // the turn at the reset goes to whoever waits then with the least usage (a user who
      // arrived during the wait goes before a flood that arrived earlier).
      bucket.resetTimer ??= setTimeout(
        () => {
          bucket.resetTimer = null;
          bucket.remaining = null;
          this.next(bucket);
        },
        Math.max(0, bucket.resetAt - this.now()),
      );
      bucket.resetTimer.unref();
      return;
    }
    let best = bucket.waiting[0];
    for (const waiter of bucket.waiting) {
      const order =
        this.usageOf(bucket, waiter.caller) - this.usageOf(bucket, best.caller) ||
        waiter.seq - best.seq;
      if (order < 0) best = waiter;
    }
    this.dequeue(bucket, best);
    // Calls queue: the time since the last start is what the bucket takes per call.
    this.sample(bucket, this.now() - bucket.lastStartAt);
    this.start(bucket);
    best.start();
  }

  private start(bucket: Bucket): void {
    bucket.busy = true;
    bucket.lastStartAt = this.now();
  }

  /** Whether the platform said the bucket is spent until a reset still ahead. */
  private exhausted(bucket: Bucket): boolean {
    return bucket.remaining === 0 && this.now() < bucket.resetAt;
  }

  /** A call has ended: its duration, and what the platform said of the bucket. */
  private observe(bucket: Bucket, tookMs: number, observed: BucketObservation | undefined): void {
    if (bucket.waiting.length === 0) this.sample(bucket, tookMs);
    if (observed?.remaining === undefined) return;
    bucket.remaining = observed.remaining;
    bucket.resetAt = this.now() + (observed.resetAfterMs ?? 0);
  }

  private sample(bucket: Bucket, ms: number): void {
    bucket.serviceMs =
      bucket.serviceMs === 0 ? ms : bucket.serviceMs * (1 - SERVICE_EWMA) + ms * SERVICE_EWMA;
  }

  private bucket(key: string, label: string): Bucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      this.sweep();
      bucket = {
        label,
        busy: false,
        waiting: [],
        entering: 0,
        enteringBy: new Map(),
        held: new Map(),
        usage: new CallerUsage(this.now),
        serviceMs: 0,
        lastStartAt: this.now(),
        remaining: null,
        resetAt: 0,
        resetTimer: null,
      };
      this.buckets.set(key, bucket);
    }
    bucket.usage.roll();
    return bucket;
  }

  private usageOf(bucket: Bucket, caller: string): number {
    return bucket.usage.of(caller);
  }

  /**
   * Gives back a caller's hold; an idle bucket whose usage has aged out is dropped, so memory
   * follows the buckets in use (a bucket per route and guild).
   */
  private release(key: string, bucket: Bucket, caller: string): void {
    const held = (bucket.held.get(caller) ?? 1) - 1;
    if (held > 0) bucket.held.set(caller, held);
    else bucket.held.delete(caller);
    if (this.idle(bucket) && bucket.usage.empty) {
      this.buckets.delete(key);
    }
  }

  /**
   * Once a usage window: drops idle buckets whose usage has aged out. Past MAX_BUCKETS: drops idle
   * buckets, the oldest first, until half are left.
   */
  private sweep(): void {
    const now = this.now();
    if (now - this.sweptAt >= USAGE_WINDOW_MS) {
      this.sweptAt = now;
      for (const [key, bucket] of this.buckets) {
        if (this.idle(bucket) && bucket.usage.empty) {
          this.buckets.delete(key);
        }
      }
    }
    if (this.buckets.size < MAX_BUCKETS) return;
    for (const [key, bucket] of this.buckets) {
      if (this.buckets.size < MAX_BUCKETS / 2) return;
      if (this.idle(bucket)) this.buckets.delete(key);
    }
  }

  private idle(bucket: Bucket): boolean {
    return (
      !bucket.busy &&
      bucket.waiting.length === 0 &&
      bucket.held.size === 0 &&
      bucket.resetTimer === null
    );
  }

  private refuse(bucket: Bucket, reason: string, estimateMs = bucket.serviceMs): BucketBusyError {
    this.refusedCount += 1;
    return new BucketBusyError(
      bucket.label,
      reason,
      Math.max(1, Math.ceil(Math.max(estimateMs, bucket.serviceMs) / 1000)),
    );
  }
}

/**
 * Buckets kept at most before idle ones (kept for their callers' usage) are swept, the oldest
 * first: a bucket is a route and guild, so this bounds the memory of a burst over many guilds.
 */
const MAX_BUCKETS = 10_000;
