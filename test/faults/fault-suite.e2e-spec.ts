import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describeWithPrivateServers } from 'test/support/describe-private-servers';
import { buildIfStale, MAIN } from 'test/support/service-process';

/** What the suite printed and how it ended. */
interface SuiteRun {
  code: number | null;
  output: string;
}

/**
 * `npm run bench:faults` in short: every fault for seconds, against two instances of the built
 * service on a PostgreSQL and a Redis of the suite's own. The suite checks the workload's
 * operations itself (lost or duplicated writes, revision gaps, stale reads, event gaps, 5xx) and
 * exits with 1 on any anomaly; its tables are printed here.
 */
describeWithPrivateServers({ redis: true, postgres: true })(
  'faults: the fault suite, short',
  () => {
    beforeAll(() => buildIfStale(), 180_000);

    it('survives every fault without an anomaly', async () => {
      const run = await new Promise<SuiteRun>((resolve) => {
        execFile(
          process.execPath,
          [
            join(MAIN, '..', '..', 'bench', 'faults.js'),
            '--before-s=2',
            '--after-s=3',
            '--stop-s=3',
            // Past the 10 s a request may wait on the database.
            '--stalls=12',
            '--redis-down-s=1',
            '--cuts=3',
          ],
          { timeout: 400_000, maxBuffer: 16 * 1024 * 1024 },
          (error, stdout, stderr) =>
            resolve({ code: error ? (error.code as number | null) : 0, output: stdout + stderr }),
        );
      });
      console.log(run.output);
      expect(run).toEqual({ code: 0, output: expect.stringContaining('| redis-cuts |') });
    }, 420_000);
  },
);
