import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where a benchmarked service keeps its embedded database. */
export type DatabaseOption = 'memory' | 'file';

/**
 * A benchmark's `--name=value` arguments (`--name` alone is `true`), checked against the options it
 * knows; `--help` prints `usage` and exits. Anything else stops the benchmark with the usage.
 */
export function readArguments(
  args: readonly string[],
  known: readonly string[],
  usage: string,
): Map<string, string> {
  const values = new Map<string, string>();
  for (const arg of args) {
    if (arg === '--help') {
      console.log(usage);
      process.exit(0);
    }
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new Error(`unknown argument "${arg}"\n\n${usage}`);
    if (!known.includes(match[1])) throw new Error(`unknown option --${match[1]}\n\n${usage}`);
    values.set(match[1], match[2] ?? 'true');
  }
  return values;
}

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
