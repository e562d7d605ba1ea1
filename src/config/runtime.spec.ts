import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The runtime pinned in package.json: the `node` package, which `npm ci` puts on every script's PATH. */
function pinnedRuntime(): string {
  const manifest = JSON.parse(
    readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'),
  ) as {
    dependencies: Record<string, string>;
  };
  return manifest.dependencies.node;
}

describe('runtime', () => {
  it('runs the tests on the pinned Node.js, not the system one', () => {
    // Printed for CI's log, which shows the runtime the suite ran on.
    console.log(`Tests run on Node.js ${process.version}`);
    expect(process.version).toBe(`v${pinnedRuntime()}`);
  });

  it('pins an exact version of an even-numbered (LTS) line', () => {
    expect(pinnedRuntime()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(Number(pinnedRuntime().split('.')[0]) % 2).toBe(0);
  });
});
