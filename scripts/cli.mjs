// `npm run cli -- <command>`: runs the built admin CLI (dist/src/cli.js), building first only when
// there is no build or a source has changed since it. Plain JavaScript, as it runs before any build.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'src', 'cli.js');
/** The build's settings: a change to one of them is a change to what it makes. */
const SETTINGS = ['tsconfig.json', 'tsconfig.build.json', 'nest-cli.json'];

/** When a file under `directory` (tests aside) last changed, or one was added or deleted. */
function lastChange(directory) {
  let last = statSync(directory).mtimeMs;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) last = Math.max(last, lastChange(path));
    else if (!entry.name.endsWith('.spec.ts')) last = Math.max(last, statSync(path).mtimeMs);
  }
  return last;
}

function builtAt() {
  try {
    return statSync(CLI).mtimeMs;
  } catch {
    return null;
  }
}

const built = builtAt();
const changed = Math.max(
  lastChange(join(ROOT, 'src')),
  ...SETTINGS.map((file) => statSync(join(ROOT, file)).mtimeMs),
);
if (built === null || changed > built) {
  console.error(built === null ? 'Building (no build yet)…' : 'Building (sources changed)…');
  // The build's messages go to stderr: stdout is the command's (settings:export prints a document).
  const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: ['inherit', 2, 2] });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
const run = spawnSync(process.execPath, [CLI, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(run.status ?? 1);
