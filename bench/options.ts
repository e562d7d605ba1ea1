import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where a benchmarked service keeps its embedded database. */
export type DatabaseOption = 'memory' | 'file';

/** An option's whole number, of at least `min`; anything else stops the benchmark, naming it. */
export function integer(name: string, value: string, min: number): number {
  const parsed = Number(value);
  if (value === '' || !Number.isInteger(parsed) || parsed < min) {
    throw new Error(`${name} must be an integer of at least ${min}, not "${value}"`);
  }
  return parsed;
}

export function databaseOption(name: string, value: string): DatabaseOption {
  if (value !== 'memory' && value !== 'file') {
    throw new Error(`${name} must be memory or file, not "${value}"`);
  }
  return value;
}

/** The service's environment for its embedded database, and how to remove what it left. */
export interface EmbeddedDatabase {
  env: Record<string, string>;
  remove(): void;
}

/** `DATABASE_URL=memory://`, or a new temporary `DATA_DIR` named `<prefix>…`. */
export function embeddedDatabase(option: DatabaseOption, prefix: string): EmbeddedDatabase {
  if (option === 'memory') return { env: { DATABASE_URL: 'memory://' }, remove: () => {} };
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  return {
    env: { DATA_DIR: dataDir },
    remove: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}
