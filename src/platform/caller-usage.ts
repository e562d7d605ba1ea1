/** Calls asked per caller are counted over two windows of this length (the current and the last). */
export const USAGE_WINDOW_MS = 60_000;

/**
 * What each caller asked of a shared platform resource (a bucket, an identity) in the last one to
 * two minutes, served or refused: a flood ranks its sender last. Whose turn comes first and who
 * loses a place are decided on it (bucket-queue.ts, identity-limiter.ts).
 */
export class CallerUsage {
  private current = new Map<string, number>();
  private previous = new Map<string, number>();
  private windowStart: number;

  constructor(private readonly now: () => number) {
    this.windowStart = now();
  }

  /** One more call asked by `caller`. */
  count(caller: string): void {
    this.roll();
    this.current.set(caller, (this.current.get(caller) ?? 0) + 1);
  }

  of(caller: string): number {
    return (this.current.get(caller) ?? 0) + (this.previous.get(caller) ?? 0);
  }

  /** Nobody asked anything in the last window or two. */
  get empty(): boolean {
    this.roll();
    return this.current.size === 0 && this.previous.size === 0;
  }

  /** Moves to a new window once the current one has ended. */
  roll(): void {
    const elapsed = this.now() - this.windowStart;
    if (elapsed < USAGE_WINDOW_MS) return;
    this.previous = elapsed < 2 * USAGE_WINDOW_MS ? this.current : new Map<string, number>();
    this.current = new Map<string, number>();
    this.windowStart = this.now();
  }

  /** The last of `waiters` whose caller asked the most. */
  heaviest<T extends { caller: string }>(waiters: readonly T[]): T {
    return waiters.reduce((worst, waiter) =>
      this.of(waiter.caller) >= this.of(worst.caller) ? waiter : worst,
    );
  }
}
