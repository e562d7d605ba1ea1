// `npm run build`: compiles (nest build), removes from dist/ what deleted sources left there
// (prune-dist.mjs), prepares the embedded database's template, then stamps the build with the time
// it started, which scripts/build-if-stale.mjs compares with the sources. Plain JavaScript, as it
// runs before any build.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = join(import.meta.dirname, '..');
/** When the last successful build started (ms since the epoch), written after it succeeded. */
export const STAMP = join(ROOT, 'dist', '.built-at');

const STEPS = [
  [join(ROOT, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js'), 'build'],
  [join(ROOT, 'scripts', 'prune-dist.mjs')],
  [join(ROOT, 'dist', 'scripts', 'prepare-embedded-database.js')],
];

/**
 * Builds; returns the exit status of the first step that failed, else 0. `output`: where the
 * steps' messages go ('inherit', or 2 for stderr when stdout is the caller's).
 */
export function build(output = 'inherit') {
  // Taken before the build: a file saved while it runs counts as changed after it.
  const started = Date.now();
  for (const step of STEPS) {
    const run = spawnSync(process.execPath, step, {
      cwd: ROOT,
      stdio: ['inherit', output, output],
    });
    if (run.status !== 0) return run.status ?? 1;
  }
  writeFileSync(STAMP, String(started));
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exit(build());
