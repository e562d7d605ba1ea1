import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { residentMemory } from './resident-memory';

/**
 * The floor the fixed stack sets under the service's memory: a process that loads every runtime
 * dependency the service loads at boot on PostgreSQL, and nothing of its own. The benchmark runs it
 * with the service's Node.js options (`node <options> stack-floor.js`) and reports its resident
 * memory beside the service's; with `--runtime-only` it loads nothing, which is Node.js's own
 * share. It prints `{"rssMb", "fileMb", "anonMb"}` (see `residentMemory`) a second later.
 */
/** Loaded only on demand (the embedded database, Redis) or never by the service (the CLI, Node). */
const NOT_LOADED_AT_BOOT = new Set([
  '@electric-sql/pglite',
  '@electric-sql/pglite-socket',
  '@nest-lab/throttler-storage-redis',
  'ioredis',
  'nest-commander',
  'node',
]);

/** Packages with no main entry, loaded through the one the service imports. */
const ENTRY_POINTS: Readonly<Record<string, string>> = {
  'discord-api-types': 'discord-api-types/v10',
};

const ROOT = join(__dirname, '..', '..');

async function main(): Promise<void> {
  if (!process.argv.includes('--runtime-only')) await loadDependencies();
  // A second after loading, as the service's boot is measured.
  setTimeout(() => console.log(JSON.stringify(residentMemory('self'))), 1000);
}

async function loadDependencies(): Promise<void> {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  for (const name of Object.keys(manifest.dependencies)) {
    if (NOT_LOADED_AT_BOOT.has(name)) continue;
    await import(require.resolve(ENTRY_POINTS[name] ?? name, { paths: [ROOT] }));
  }
}

void main();
