import { createHash, randomInt } from 'node:crypto';

/**
 * The largest sweeps (every value against every column of every setting in every operation) try a
 * sample of their cases on each run, different from run to run, and every case when
 * `FULL_SWEEP=1` (CI's PostgreSQL pass, `npm run test:full`). The run's seed is printed by each
 * file that samples; `TEST_SEED=<seed>` makes the same choices again.
 */
export const FULL_SWEEP = process.env.FULL_SWEEP === '1';

const SEED = process.env.TEST_SEED ?? String(randomInt(2 ** 31));
let announced = false;

/**
 * `count` of `items`, chosen by the run's seed and `key` (so a choice does not depend on which
 * other tests run), in their original order; all of them in a full sweep.
 */
export function sample<T>(key: string, items: readonly T[], count: number): readonly T[] {
  if (FULL_SWEEP || items.length <= count) return items;
  if (!announced) {
    announced = true;
    console.log(
      `Sampled sweep, seed ${SEED}: TEST_SEED=${SEED} repeats these choices, FULL_SWEEP=1 tries every case`,
    );
  }
  const random = generator(`${SEED}:${key}`);
  const chosen = new Set<number>();
  while (chosen.size < count) chosen.add(Math.floor(random() * items.length));
  return items.filter((_, index) => chosen.has(index));
}

/** A small seeded generator (mulberry32) of numbers in [0, 1). */
function generator(seed: string): () => number {
  let state = createHash('sha256').update(seed).digest().readUInt32LE(0);
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
