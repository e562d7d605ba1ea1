import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_REDIRECT_URI } from 'src/config/app-config';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { unusedPort } from 'test/support/ports';

export const ROOT = join(__dirname, '..', '..');

/** The Node.js options `npm run start:prod` runs the service with: `node <options> dist/src/main.js`. */
export const SERVICE_NODE_OPTIONS = startOptions();

function startOptions(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const words = manifest.scripts['start:prod'].split(/\s+/);
  return words.slice(1, words.indexOf('dist/src/main.js'));
}

export interface ServiceProcess {
  process: ChildProcess;
  baseUrl: string;
  inspectorPort: number;
  /** From the spawn to a healthy /healthz. */
  healthyAfterMs: number;
}

/**
 * Starts the built service as `npm start` does (rate limits off, loopback, a free port) and waits
 * for a healthy /healthz. The inspector stays off until asked for (SIGUSR1).
 */
export async function startServiceProcess(
  env: Record<string, string>,
  /** Where the service's log goes (appended); by default nowhere. */
  logFile?: string,
): Promise<ServiceProcess> {
  const port = await unusedPort();
  const inspectorPort = await unusedPort();
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      ...SERVICE_NODE_OPTIONS,
      `--inspect-port=127.0.0.1:${inspectorPort}`,
      join(ROOT, 'dist', 'src', 'main.js'),
    ],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        PORT: String(port),
        HOST: '127.0.0.1',
        RATE_LIMITS_ENABLED: 'false',
        // The benchmarks log in with the default port's redirect URI; the service's own default
        // follows PORT, a free port here.
        OAUTH2_ALLOWED_REDIRECTS: DEFAULT_REDIRECT_URI,
        // The soak's shard reports come from the demo user's API token.
        ROOT_USERS: DEMO_IDS.demoUser,
        ...env,
      },
      stdio: logFile ? ['ignore', openSync(logFile, 'a'), openSync(logFile, 'a')] : 'ignore',
    },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitForHealthy(baseUrl);
  } catch (error) {
    await stopServiceProcess(child);
    throw error;
  }
  return {
    process: child,
    baseUrl,
    inspectorPort,
    healthyAfterMs: Math.round(performance.now() - started),
  };
}

export async function stopServiceProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function waitForHealthy(baseUrl: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) return;
    } catch {
      // not up yet
    }
    await sleep(100);
  }
  throw new Error('the service did not start');
}
