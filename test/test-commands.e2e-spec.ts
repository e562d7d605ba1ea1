import { spawnSync } from 'node:child_process';
import { relative, resolve } from 'node:path';

/**
 * The per-tier test commands as CONTRIBUTING shows them: `npm run test:<tier> -- <paths>` runs the
 * named files of that tier and nothing else. Jest only lists the files (`--listTests`), so this
 * costs a few seconds and no test run.
 */
const ROOT = resolve(__dirname, '..');
const UNIT_FILE = 'src/common/service-version.spec.ts';
const SERVICE_FILE = 'src/commands/commands.service.spec.ts';
const E2E_FILE = 'test/health.e2e-spec.ts';

interface Listing {
  status: number | null;
  files: string[];
  stderr: string;
}

/** What `npm run <script> -- <args>` lists, as paths relative to the repository. */
function listed(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Listing {
  const run = spawnSync('npm', ['run', '-s', script, '--', ...args, '--listTests'], {
    cwd: ROOT,
    encoding: 'utf8',
    // The suite's own tier selection must not leak into the command under test.
    env: { ...process.env, TEST_TIERS: undefined, ...env },
    timeout: 120_000,
  });
  const files = run.stdout
    .split('\n')
    .filter((line) => line.startsWith('/'))
    .map((line) => relative(ROOT, line))
    .sort();
  return { status: run.status, files, stderr: run.stderr };
}

describe('per-tier test commands', () => {
  it.each([
    ['test:unit', [UNIT_FILE], [UNIT_FILE]],
    ['test:service', [SERVICE_FILE], [SERVICE_FILE]],
    ['test:e2e', [E2E_FILE], [E2E_FILE]],
    ['test:quick', [UNIT_FILE, SERVICE_FILE], [SERVICE_FILE, UNIT_FILE]],
    // A path of another tier is not run by this tier's command.
    ['test:e2e', [UNIT_FILE], []],
    ['test:unit', [E2E_FILE], []],
  ])('npm run %s -- %j lists %j', (script, args, expected) => {
    const result = listed(script, args);
    expect(result.files).toEqual(expected);
  });

  it('runs every file of its tier when no path is named', () => {
    const result = listed('test:e2e', []);
    expect(result.status).toBe(0);
    expect(result.files.length).toBeGreaterThan(10);
    expect(result.files.every((file) => file.endsWith('.e2e-spec.ts'))).toBe(true);
  });

  it('refuses a tier that does not exist, naming the ones that do', () => {
    const result = listed('test', [], { TEST_TIERS: 'intergration' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(
      'TEST_TIERS names intergration; the tiers are unit, service, e2e',
    );
  });
});
