import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';

/** The service and the CLI as processes, the way users run them (`npm start`, the built code). */
const ROOT = resolve(__dirname, '..', '..');
export const MAIN = join(ROOT, 'dist', 'src', 'main.js');

/**
 * Builds as `npm start` and `npm run cli` do: when there is no build or a source changed since the
 * last one. For a `beforeAll` (up to two minutes on a busy machine).
 */
export function buildIfStale(): void {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-if-stale.mjs')], {
    cwd: ROOT,
    stdio: 'pipe',
    timeout: 120_000,
  });
}

/** Node.js's cache of compiled code, kept across the suite's many starts of the built code. */
const COMPILE_CACHE = join(
  ROOT,
  'node_modules',
  '.cache',
  'bot-management-service',
  'node-compile',
);

export function serviceEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  // Only what the service needs: nothing of the CI's DATABASE_URL or REDIS_URL leaks in.
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_COMPILE_CACHE: COMPILE_CACHE,
    ...env,
  };
}

/**
 * Starts the built service. `port` is the one it bound, read from its start line: with PORT=0 the
 * system picks a free port as it binds, so no other process can take it in between.
 */
export function startService(
  env: Record<string, string>,
  /** What to run: the built service by default, or a user's command (`npm start`). */
  run: { command: string; args: string[] } = { command: process.execPath, args: [MAIN] },
): {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  port: Promise<number>;
  output(): string;
} {
  const child = spawn(run.command, run.args, { cwd: ROOT, env: serviceEnv(env) });
  let output = '';
  let bound: (port: number) => void = () => undefined;
  let failed: (error: Error) => void = () => undefined;
  const port = new Promise<number>((resolve, reject) => {
    bound = resolve;
    failed = reject;
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    const started = /"port":(\d+)[^\n]*"msg":"Service started"/.exec(output);
    if (started) bound(Number(started[1]));
  });
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('close', (code, signal) => done({ code, signal })),
  );
  // A service that exits before binding fails the test with its output, instead of a timeout.
  void exited.then(() => failed(new Error(`The service exited before listening:\n${output}`)));
  return { child, exited, port, output: () => output };
}
