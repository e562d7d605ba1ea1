import { countsAsInvalid, InvalidRequestBudget } from 'src/platform/invalid-request-budget';

/** The platform bans an address at this many invalid answers in ten minutes. */
const PLATFORM_BAN_AT = 10_000;
const DEFAULT_MAX_ADDRESSES = 1_000;

/**
 * What the platform would hold against each address: its 401, 403 and 429 answers (not the 429s of
 * a shared resource) over the last ten minutes, in the fixed slots of `InvalidRequestBudget`. The
 * emulator only counts; it never bans. At most `maxAddresses` are kept: past that, addresses with
 * nothing in the window go first, then the one counted longest ago.
 */
export class InvalidAnswerCounts {
  /** Oldest-counted first (an address is re-inserted at each count). */
  private readonly byAddress = new Map<string, InvalidRequestBudget>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxAddresses = DEFAULT_MAX_ADDRESSES,
  ) {}

  /** Addresses held now (for tests of the memory bound). */
  get size(): number {
    return this.byAddress.size;
  }

  record(address: string, status: number, rateLimitScope: string | null): void {
    if (!countsAsInvalid(status, rateLimitScope)) return;
    let counts = this.byAddress.get(address);
    if (counts) {
      this.byAddress.delete(address);
    } else {
      if (this.byAddress.size >= this.maxAddresses) this.makeRoom();
      counts = new InvalidRequestBudget(PLATFORM_BAN_AT, this.now);
    }
    this.byAddress.set(address, counts);
    counts.record();
  }

  /** Invalid answers of the last ten minutes (a slot at most more): of one address, or of all. */
  count(address?: string): number {
    if (address !== undefined) return this.byAddress.get(address)?.count() ?? 0;
    let total = 0;
    for (const counts of this.byAddress.values()) total += counts.count();
    return total;
  }

  private makeRoom(): void {
    for (const [address, counts] of this.byAddress) {
      if (counts.count() === 0) this.byAddress.delete(address);
    }
    if (this.byAddress.size < this.maxAddresses) return;
    const oldest = this.byAddress.keys().next();
    if (!oldest.done) this.byAddress.delete(oldest.value);
  }
}
