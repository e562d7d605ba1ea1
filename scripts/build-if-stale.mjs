// Builds (`npm run build`) only when there is no build yet or something it is made of changed since
// the last one: `npm start`, `npm run cli` and the process tests run an up-to-date build as it is.
// Plain JavaScript, as it runs before any build. Run directly, it builds if stale and exits with
// the build's status.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { STAMP } from './build.mjs';

const ROOT = join(import.meta.dirname, '..');
/** What tsconfig.build.json compiles. */
const SOURCES = ['src', 'scripts', 'bench', 'ormconfig.ts'];
/** The build's settings and tools: a change to one of them is a change to what it makes. */
const SETTINGS = [
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
  'package.json',
  'package-lock.json',
];
/** What the build reads under SOURCES; anything else there (a benchmark's results) is no input. */
const INPUT = /\.(ts|mts|cts|js|mjs|cjs|json)$/;

/** When a file under `path` (tests aside) last changed, or one was added or deleted. */
function lastChange(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return INPUT.test(path) ? stat.mtimeMs : 0;
  let last = stat.mtimeMs;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.name.endsWith('.spec.ts')) continue;
    last = Math.max(last, lastChange(join(path, entry.name)));
  }
  return last;
}

function builtAt() {
  try {
    return Number(readFileSync(STAMP, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * Builds when the build is missing or stale; returns the build's exit status (0 when nothing was
 * to do). The build's messages go to stderr: stdout is the caller's (settings:export prints a
 * document there).
 */
export function buildIfStale() {
  const built = builtAt();
  const changed = Math.max(
    ...[...SOURCES, ...SETTINGS].map((path) => lastChange(join(ROOT, path))),
  );
  if (built !== null && changed <= built) return 0;
  console.error(built === null ? 'Building (no build yet)…' : 'Building (sources changed)…');
  // Taken before the build: a file saved while it runs counts as changed after it.
  const started = Date.now();
  const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: ['inherit', 2, 2] });
  if (build.status !== 0) return build.status ?? 1;
  // `npm run build` stamps its own run too (scripts/build.mjs); this stamp is as early or earlier.
  writeFileSync(STAMP, String(started));
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exit(buildIfStale());
