// `npm run cli -- <command>`: runs the built admin CLI (dist/src/cli.js), building first only when
// there is no build or a source has changed since it. Plain JavaScript, as it runs before any build.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { buildIfStale } from './build-if-stale.mjs';

const CLI = join(import.meta.dirname, '..', 'dist', 'src', 'cli.js');

const built = buildIfStale();
if (built !== 0) process.exit(built);
const run = spawnSync(process.execPath, [CLI, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(run.status ?? 1);
