// `npm start`: builds when there is no build or it is stale (build-if-stale.mjs), then runs the
// service in this very process. The script is `exec node …`, so npm's child is this process (no
// shell in between), and npm forwards SIGINT and SIGTERM to it: stopping the pid `npm start`
// gives, or the service's own, stops the service cleanly, its port and data directory released
// (docs/operations.md, "Stopping"). Plain JavaScript, as it runs before any build.
import { createRequire } from 'node:module';
import { buildIfStale } from './build-if-stale.mjs';

/** How often the service looks whether whoever started it is still there. */
const PARENT_CHECK_MS = 500;

const built = buildIfStale();
if (built !== 0) process.exit(built);

// Should npm go without passing a signal on (SIGKILL, a crash), the service is adopted by another
// process: it then stops as if told to, rather than holding its port and data directory alone.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
}, PARENT_CHECK_MS).unref();

createRequire(import.meta.url)('../dist/src/main.js');
