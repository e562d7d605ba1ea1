/**
 * The platform bans an address for an hour once it has drawn 10,000 invalid requests (401, 403
 * and 429 answers) within 10 minutes; this is that window.
 */
export const INVALID_REQUEST_WINDOW_MS = 10 * 60_000;
/** Answers are counted per slot of this length, so memory stays fixed whatever the traffic. */
const SLOT_MS = 10_000;

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
export class InvalidRequestBudget {
  private readonly slotCount = Math.ceil(INVALID_REQUEST_WINDOW_MS / SLOT_MS) + 1;
  /** Per ring position: which slot (time / SLOT_MS) it holds, and that slot's count. */
  private readonly slotOf: number[] = new Array<number>(this.slotCount).fill(-1);
  private readonly counts: number[] = new Array<number>(this.slotCount).fill(0);

  constructor(
    /** The count at which the budget is spent. */
    readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  record(): void {
    const slot = Math.floor(this.now() / SLOT_MS);
    const at = slot % this.slotCount;
    if (this.slotOf[at] !== slot) {
      this.slotOf[at] = slot;
      this.counts[at] = 0;
    }
    this.counts[at] += 1;
  }

  /** Invalid answers within the window (a slot at most more). */
  count(): number {
    const current = Math.floor(this.now() / SLOT_MS);
    let total = 0;
    for (let at = 0; at < this.slotCount; at++) {
      if (current - this.slotOf[at] < this.slotCount) total += this.counts[at];
    }
    return total;
  }

  spent(): boolean {
    return this.count() >= this.limit;
  }
}
