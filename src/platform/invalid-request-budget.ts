/**
 * The platform bans an address for an hour once it has drawn 10,000 invalid requests (401, 403
 * and 429 answers) within 10 minutes; this is that window.
 */
export const INVALID_REQUEST_WINDOW_MS = 10 * 60_000;
/** Answers are counted per slot of this length, so memory stays fixed whatever the traffic. */
export const SLOT_MS = 10_000;

/**
 * What the transport asks of an invalid-request budget: this instance's own
 * (`InvalidRequestBudget`), or the fleet's in Redis (`SharedInvalidRequestBudget`).
 */
export interface InvalidAnswerBudget {
  /** The count at which calls stop. */
  readonly limit: number;
  /** One more invalid answer. */
  record(): void;
  /** Whether no further call may leave. */
  spent(): boolean | Promise<boolean>;
  /** The invalid answers the decision is made on (for the log and the metrics). */
  count(): number;
  /** The count at which calls stop now (below `limit` while on a share of a fleet's). */
  threshold(): number;
}

/**
 * Whether the platform counts this answer against the invalid-request limit: 401, 403 and 429,
 * except a 429 of a shared resource (`X-RateLimit-Scope: shared`), which it does not hold against us.
 */
export function countsAsInvalid(status: number, rateLimitScope: string | null): boolean {
  if (status === 429) return rateLimitScope !== 'shared';
  return status === 401 || status === 403;
}

/**
 * The invalid answers of the last ten minutes, in fixed slots: a slot is kept until its end is a
 * full window old, so the count never falls short of the platform's (it may exceed it by a slot).
 */
export class InvalidRequestBudget implements InvalidAnswerBudget {
  private readonly slotMs: number;
  private readonly slotCount: number;
  /** Per ring position: which slot (time / slotMs) it holds, and that slot's count. */
  private readonly slotOf: number[];
  private readonly counts: number[];

  constructor(
    /** The count at which the budget is spent. */
    readonly limit: number,
    private readonly now: () => number = Date.now,
    /** Tests shorten the window and its slots. */
    window: { windowMs: number; slotMs: number } = {
      windowMs: INVALID_REQUEST_WINDOW_MS,
      slotMs: SLOT_MS,
    },
  ) {
    this.slotMs = window.slotMs;
    this.slotCount = Math.ceil(window.windowMs / window.slotMs) + 1;
    this.slotOf = new Array<number>(this.slotCount).fill(-1);
    this.counts = new Array<number>(this.slotCount).fill(0);
  }

  record(): void {
    const slot = Math.floor(this.now() / this.slotMs);
    const at = slot % this.slotCount;
    if (this.slotOf[at] !== slot) {
      this.slotOf[at] = slot;
      this.counts[at] = 0;
    }
    this.counts[at] += 1;
  }

  /**
   * Invalid answers within the window (a slot at most more). Slots ahead of the clock (it stepped
   * back) are not counted: they would hold the budget spent until the clock caught up.
   */
  count(): number {
    const current = Math.floor(this.now() / this.slotMs);
    let total = 0;
    for (let at = 0; at < this.slotCount; at++) {
      const age = current - this.slotOf[at];
      if (age >= 0 && age < this.slotCount) total += this.counts[at];
    }
    return total;
  }

  spent(): boolean {
    return this.count() >= this.limit;
  }

  threshold(): number {
    return this.limit;
  }
}
