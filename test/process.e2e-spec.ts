import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from 'test/support/eventually';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { loginAs } from 'test/support/auth';
import { committedDocument } from 'test/support/contract';
import { createTestApp, TEST_TOKEN_ENCRYPTION_KEY, type TestApp } from 'test/support/test-app';
import { buildIfStale, MAIN, serviceEnv, startService } from 'test/support/service-process';
import { describeShared } from 'test/support/two-instances';
import { CREATABLE_SETTINGS } from 'test/support/declared-settings';

const ROOT = resolve(__dirname, '..');
const CLI = join(ROOT, 'dist', 'src', 'cli.js');
/** The demo community's moderation log channel: the bot may post there. */
const MOD_LOG = '1100000000000000132';

// Each test starts the built service or the CLI several times, a few seconds of CPU each: more
// than the suite's minute when the machine's other cores are busy with the other test files.
jest.setTimeout(180_000);

/** The data directories of the file's services, removed after them. */
const SCRATCH = mkdtempSync(join(tmpdir(), 'bms-process-'));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

// The built entry points, as `npm start` and `npm run cli` build and run them.
beforeAll(buildIfStale, 180_000);

/** The service in a child process. */
describe('the service process', () => {
  it('stops at boot with one line naming a bad variable', async () => {
    const run = await runToExit({ PORT: 'eighty', LOG_LEVEL: 'loud' });
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toEqual([expect.stringMatching(/^Invalid configuration: PORT .*LOG_LEVEL/)]);
    expect(run.stdout).toBe('');
  });

  describe('stops at boot with one fatal line in the log format, after the boot lines so far', () => {
    /** The run's log lines, parsed; every line on stdout is a JSON log line. */
    function linesOf(run: { stdout: string }): { level: string; msg: string; context?: string }[] {
      return run.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { level: string; msg: string; context?: string });
    }

    function expectOneFatalLine(
      run: { code: number | null; stdout: string; stderr: string },
      message: RegExp,
    ): void {
      expect(run.code).toBe(1);
      expect(run.stderr).toBe('');
      const lines = linesOf(run);
      // Only information before the end: no error lines, no stacks, nothing but the one fatal line.
      expect(lines.filter((line) => line.level !== 'info')).toEqual([
        {
          level: 'fatal',
          msg: expect.stringMatching(message),
          time: expect.any(Number),
          pid: expect.any(Number),
          hostname: expect.any(String),
        },
      ]);
      // Nothing after it, the lines of Fastify's own logger (a child of the root) included.
      expect(lines.slice(lines.findIndex((line) => line.level === 'fatal') + 1)).toEqual([]);
      // The boot's own lines, as they happened, show how far it got.
      expect(lines[0]).toMatchObject({ level: 'info', context: 'NestFactory' });
    }

    it('when its port is in use', async () => {
      const holder = createServer();
      await new Promise<void>((done) => holder.listen(0, '127.0.0.1', done));
      const { port } = holder.address() as AddressInfo;
      try {
        const dataDir = mkdtempSync(join(SCRATCH, 'port-'));
        const run = await runToExit({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir });
        // Said before anything boots: the one fatal line is the only line.
        expect(run.code).toBe(1);
        expect(run.stderr).toBe('');
        expect(linesOf(run)).toEqual([
          expect.objectContaining({
            level: 'fatal',
            msg: expect.stringMatching(
              new RegExp(`^Port ${port} is already in use on 127\\.0\\.0\\.1: .*set PORT`),
            ),
          }),
        ]);
        // The database never started: the data directory holds only the key the configuration
        // made when it was read.
        expect(readdirSync(dataDir)).toEqual(['token-encryption.key']);
      } finally {
        holder.close();
      }
    });

    it('when nothing answers at DATABASE_URL', async () => {
      const closed = createServer();
      await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
      const { port } = closed.address() as AddressInfo;
      await new Promise((done) => closed.close(done));
      const run = await runToExit({
        PORT: '0',
        DATABASE_URL: `postgres://postgres:secret-password@127.0.0.1:${port}/bms`,
        TOKEN_ENCRYPTION_KEY: TEST_TOKEN_ENCRYPTION_KEY,
      });
      expectOneFatalLine(
        run,
        new RegExp(`^Nothing answers at 127\\.0\\.0\\.1:${port} \\(DATABASE_URL\\)`),
      );
      expect(run.stdout).not.toContain('secret-password');
    });

    // As root the test runs the service as an unprivileged user, who must be able to reach this
    // checkout's Node.js (a clone in a private folder, mode 0700, is out of its reach).
    const unprivileged = process.getuid?.() === 0 ? unprivilegedRun() : { ok: true, why: '' };
    if (!unprivileged.ok) {
      console.warn(`Skipping "when the data directory cannot be written": ${unprivileged.why}`);
    }
    (unprivileged.ok ? it : it.skip)('when the data directory cannot be written', async () => {
      // Root may write anywhere: the service then runs as an unprivileged user.
      const parent = mkdtempSync(join(SCRATCH, 'readonly-'));
      chmodSync(parent, 0o555);
      const asRoot = process.getuid?.() === 0;
      const dataDir = join(parent, 'data');
      const run = await runToExit(
        { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir },
        [MAIN],
        asRoot ? { uid: 65534, gid: 65534 } : {},
      );
      expect(run.code).toBe(1);
      expect(linesOf(run)).toEqual([
        expect.objectContaining({
          level: 'fatal',
          msg: `Cannot write ${dataDir} (EACCES: permission denied): give this process write access to it, or set DATA_DIR to a directory it can write`,
        }),
      ]);
    });
  });

  it("loads none of the admin CLI's commands (nest-commander and what it brings)", async () => {
    // What the service's process loads, short of booting: the application and its modules.
    const probe = [
      `require(${JSON.stringify(join(ROOT, 'dist', 'src', 'app.setup.js'))});`,
      'const loaded = Object.keys(require.cache);',
      'console.log(JSON.stringify(loaded.filter((path) => /[\\/]node_modules[\\/](nest-commander|inquirer|@inquirer)[\\/]/.test(path))));',
    ].join('\n');
    const run = await runToExit({}, ['-e', probe]);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual([]);
  });

  it('serves on the embedded default, drains in-flight requests on SIGTERM and closes the database', async () => {
    const dataDir = mkdtempSync(join(SCRATCH, 'process-'));
    const service = startService({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir });
    try {
      const port = await service.port;
      await waitForHealthy(port);
      expect(JSON.parse(await get(port, '/config'))).toHaveProperty('client_id');
      // The built service serves the committed document, settings request schemas included.
      expect(JSON.parse(await get(port, '/openapi.json'))).toEqual(committedDocument());

      // A request whose body is still arriving when SIGTERM comes must get its answer.
      const inFlight = slowPost(port, '/no-such-route');
      await sleep(100);
      service.child.kill('SIGTERM');
      await sleep(200);
      const answer = await inFlight.finish();
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'NotFound' });
      // Keep-alive clients are told to go, so they cannot hold the process open.
      expect(answer.connection).toBe('close');

      const exit = await service.exited;
      expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
      expect(service.output()).toContain('Embedded database closed');
    } finally {
      service.child.kill('SIGKILL');
    }

    // The data directory is reusable: a second start opens it.
    const again = startService({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir });
    try {
      const port = await again.port;
      await waitForHealthy(port);
      expect(JSON.parse(await get(port, '/readyz'))).toEqual({
        status: 'ok',
        checks: { database: 'up' },
      });
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  });
});

/**
 * `npm start` as a user runs it, stopped with SIGTERM to the pid it gives, or to the service's own
 * (the `pid` of its log lines): either way the service stops cleanly, and its port and data
 * directory are free at once (docs/operations.md, "Stopping").
 */
describe('npm start, stopped by either pid', () => {
  it.each([
    ['SIGTERM to the pid npm start gives', 'npm', 'SIGTERM'],
    ["SIGTERM to the service's own pid", 'service', 'SIGTERM'],
    ['SIGINT to the pid npm start gives', 'npm', 'SIGINT'],
    ['SIGKILL to npm (the service sees it has lost its parent)', 'npm', 'SIGKILL'],
  ] as const)('stops cleanly on %s', async (_name, target, signal) => {
    const dataDir = mkdtempSync(join(SCRATCH, 'npm-start-'));
    const started = startService(
      { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir },
      { command: 'npm', args: ['start'] },
    );
    try {
      const port = await started.port;
      await waitForHealthy(port);
      const servicePid = Number(/"pid":(\d+)/.exec(started.output())?.[1]);
      expect(servicePid).toBeGreaterThan(0);
      process.kill(target === 'npm' ? (started.child.pid as number) : servicePid, signal);
      await started.exited;
      // The service's own exit, however npm went.
      await eventually(
        () => Promise.resolve(isRunning(servicePid)),
        (running) => !running,
        30_000,
      );
      // The service is gone, not left behind by npm: its pid, its port and its data directory.
      expect(isRunning(servicePid)).toBe(false);
      // Its last lines went to npm's output, unless npm was gone before them.
      if (signal !== 'SIGKILL') expect(started.output()).toContain('Embedded database closed');
      const again = startService({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir });
      try {
        expect(await again.port).toBe(port);
        await waitForHealthy(port);
      } finally {
        again.child.kill('SIGTERM');
        await again.exited;
      }
    } finally {
      started.child.kill('SIGKILL');
    }
  });
});

/**
 * Whether a process of that pid runs: it exists (signal 0 checks without sending anything) and,
 * where /proc says, has not exited waiting to be reaped (a zombie holds no port or file).
 */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
  return !/^\d+ \(.*\) Z /.test(stat);
}

describe('the service process under load', () => {
  it('loses no accepted write when SIGTERM arrives mid-load, and answers no write with a 5xx', async () => {
    const dataDir = mkdtempSync(join(SCRATCH, 'sigterm-'));
    const env = {
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      RATE_LIMITS_ENABLED: 'false',
    };
    const service = startService(env);
    const port = await service.port;
    const accepted: string[] = [];
    const failed: { status: number; body: string }[] = [];
    let token: string;
    try {
      await waitForHealthy(port);
      token = await demoLogin(port, DEMO_IDS.alice);
      // Writers create audit-log sinks, each on a new connection, until the service is gone.
      const writer = async (): Promise<void> => {
        for (;;) {
          let res: { status: number; body: string };
          try {
            res = await send(port, 'POST', `/guilds/${DEMO_IDS.community}/settings`, token, {
              setting: 'auditlog_sinks',
              operation: 'Create',
              fields: { channel: MOD_LOG, events: ['lockdown'], enabled: true },
            });
          } catch {
            return; // refused: the service has stopped listening
          }
          if (res.status === 200) accepted.push((JSON.parse(res.body) as SinkAnswer).data.id);
          else failed.push(res);
        }
      };
      const writers = Array.from({ length: 8 }, writer);
      await sleep(1_000);
      service.child.kill('SIGTERM');
      const exit = await service.exited;
      await Promise.all(writers);
      expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
    } finally {
      service.child.kill('SIGKILL');
    }
    expect(failed).toEqual([]);
    expect(accepted.length).toBeGreaterThan(0);

    // Every write the service acknowledged is there after a restart on the same data directory.
    const again = startService(env);
    try {
      const restartedPort = await again.port;
      await waitForHealthy(restartedPort);
      const stored = new Set<string>();
      for (let offset = 0; ; offset += 100) {
        const page = await send(
          restartedPort,
          'POST',
          `/guilds/${DEMO_IDS.community}/settings`,
          token,
          {
            setting: 'auditlog_sinks',
            operation: 'View',
            fields: { limit: 100, offset },
          },
        );
        const sinks = (JSON.parse(page.body) as { data: { id: string }[] }).data;
        for (const sink of sinks) stored.add(sink.id);
        if (sinks.length < 100) break;
      }
      expect(accepted.filter((id) => !stored.has(id))).toEqual([]);
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  });
});

describe('the admin CLI', () => {
  const dataDir = mkdtempSync(join(SCRATCH, 'cli-'));
  const cli = (
    ...args: string[]
  ): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    runToExit({ DATA_DIR: dataDir }, [CLI, ...args]);
  /** Runs `check` against the built service (its port and process id) on the CLI's data directory. */
  const asService = async (check: (port: number, pid: number) => Promise<void>): Promise<void> => {
    const service = startService({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir });
    try {
      const port = await service.port;
      await waitForHealthy(port);
      await check(port, service.child.pid as number);
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  };
  it('creates an API token that the service accepts, bans and unbans its user', async () => {
    const created = await cli(
      'tokens:create',
      '--user',
      '424242',
      '--name',
      'ci',
      '--expiry',
      '3600',
    );
    expect(created.code).toBe(0);
    const token = created.stdout.trim().split('\n').at(-1) ?? '';
    expect(token).toMatch(/^ara_[A-Za-z0-9_-]{43}$/);

    await asService(async (p, pid) => {
      const me = JSON.parse(await get(p, '/sessions/@me', token)) as {
        user_id: string;
        name: string;
      };
      expect(me).toMatchObject({ user_id: '424242', name: 'ci', type: 'api' });
      // Beside the running service, the CLI works on the embedded database the service shares:
      // what it writes, the service sees.
      // For a user id past signed 64 bits (2^64-1, the largest the platform's contract allows).
      const beside = await cli(
        'tokens:create',
        '--user',
        '18446744073709551615',
        '--name',
        'beside',
      );
      // Made, and said to be refused by the internal routes: the user is not in ROOT_USERS.
      expect(beside).toMatchObject({
        code: 0,
        stderr: expect.stringMatching(
          /^Warning: user 18446744073709551615 is not in ROOT_USERS \(/,
        ),
      });
      const besideToken = beside.stdout.trim().split('\n').at(-1) ?? '';
      expect(JSON.parse(await get(p, '/sessions/@me', besideToken))).toMatchObject({
        user_id: '18446744073709551615',
        name: 'beside',
      });
      const listed = await cli('sessions:list', '--user', '424242');
      expect(listed).toMatchObject({ code: 0, stderr: '' });
      expect(listed.stdout).toMatch(/ api +ci +/);
      // And so is a second service, with one fatal line.
      const second = await runToExit({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir });
      expect(second.code).toBe(1);
      expect(
        second.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as object)
          .at(-1),
      ).toMatchObject({
        level: 'fatal',
        msg: `The embedded database in ${join(dataDir, 'pglite')} is in use by process ${pid}: stop it first, or set DATABASE_URL to a PostgreSQL server`,
      });
    });

    const listed = await cli('sessions:list', '--user', '424242');
    expect(listed.stdout).toMatch(/^ID +TYPE +NAME +STATE +EXPIRES +LAST USED \(UTC\)$/m);
    expect(listed.stdout).toMatch(/ api +ci +/);
    const banned = await cli('users:ban', '424242');
    expect(banned.stdout).toContain('User 424242 is banned.');
    // No Redis here: the CLI says when a running service would see the ban.
    expect(banned.stdout).toContain('Without REDIS_URL a running service applies this within 30 s');
    await asService(async (p) => {
      await expect(get(p, '/sessions/@me', token)).rejects.toThrow(/ApiBanned/);
    });
    expect((await cli('users:unban', '424242')).code).toBe(0);
    await asService(async (p) => {
      await get(p, '/sessions/@me', token);
    });
  });

  it('exports a guild’s settings to a file and imports one: a dry run, then --apply', async () => {
    const file = join(dataDir, 'community.json');
    const exported = await cli('settings:export', DEMO_IDS.community, '--out', file);
    expect(exported.code).toBe(0);
    // Every setting that can hold entries (those that offer Create), whatever is declared.
    expect(exported.stdout).toMatch(
      new RegExp(
        `^Exported ${CREATABLE_SETTINGS.length} settings \\(\\d+ entr(y|ies)\\) of guild \\d+ to `,
        'm',
      ),
    );
    const document = JSON.parse(readFileSync(file, 'utf8')) as {
      format: string;
      settings: Record<string, unknown[]>;
    };
    expect(document.format).toBe('bot-management-service/settings');
    document.settings = {
      guildroles: [{ role_id: '1100000000000000199', perms: ['rpc.view'], index: 30 }],
    };
    writeFileSync(file, JSON.stringify(document));

    const dryRun = await cli('settings:import', DEMO_IDS.community, file);
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toContain(
      'guildroles: 0 created, 0 updated, 0 deleted, 0 unchanged, 1 refused',
    );
    expect(dryRun.stdout).toContain('Roles not in this guild: 1100000000000000199');
    const refused = await cli('settings:import', DEMO_IDS.community, file, '--apply');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('The import was refused');

    const mapped = await cli(
      'settings:import',
      DEMO_IDS.community,
      file,
      '--apply',
      '--map-role',
      '1100000000000000199=1100000000000000107',
    );
    expect(mapped.code).toBe(0);
    expect(mapped.stdout).toContain('guildroles: 1 created, 0 updated, 0 deleted');
    expect(mapped.stdout.trim().split('\n').at(-1)).toBe('Applied: 1 revisions recorded.');
    const again = await cli('settings:export', DEMO_IDS.community);
    expect(JSON.parse(again.stdout).settings.guildroles).toEqual([
      { role_id: '1100000000000000107', perms: ['rpc.view'], index: 30 },
    ]);
    const bad = await cli('settings:import', DEMO_IDS.community, file, '--map-role', 'x=1');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--map-role must be <id>=<id>');
  });

  it('syncs the command catalog to the platform (the emulator in demo mode)', async () => {
    const dryRun = await cli('commands:sync', '--dry-run');
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toMatch(/^added \(\d+\): \/ban, \/unban, \/kick/m);
    expect(dryRun.stdout).toContain('Whois (user menu)');
    expect(dryRun.stdout.trim().split('\n').at(-1)).toBe('Dry run: nothing was sent.');
    const applied = await cli('commands:sync');
    expect(applied.code).toBe(0);
    expect(applied.stdout.trim().split('\n').at(-1)).toBe('The catalog was installed.');
  });

  it.each([
    [
      ['users:ban', 'abc'],
      'Error: user_id must be a snowflake (a decimal id of at most 20 digits)',
    ],
    [['sessions:ban', 'nope'], 'Error: session_id must be a UUID'],
    [
      ['tokens:create', '--user', '1', '--name', 'x', '--expiry', '10'],
      'Error: --expiry must not be less than 60',
    ],
    // The API's own rules: a name the API refuses is refused here too.
    [
      ['tokens:create', '--user', '1', '--name', 'tab\there'],
      'Error: --name must not contain control characters',
    ],
    [
      ['tokens:create', '--user', '1', '--name', 'x'.repeat(65)],
      'Error: --name must be shorter than or equal to 64 characters',
    ],
    [
      ['tokens:create', '--user', '1', '--name', 'tab\there', '--expiry', '10'],
      'Error: --name must not contain control characters; --expiry must not be less than 60',
    ],
    [['tokens:create', '--user', '1'], "error: required option '--name <name>' not specified"],
    [['no-such-command'], "error: unknown command 'no-such-command'"],
  ])('refuses %p with one line and exit code 1', async (args, message) => {
    const run = await cli(...args);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(message);
  });

  it('answers help and wrong arguments without the database, while the service holds it', async () => {
    await asService(async () => {
      const help = await cli('--help');
      expect(help).toEqual({ code: 0, stdout: expect.stringMatching(/^Usage: cli /), stderr: '' });
      expect(help.stdout).toContain('users:ban <user_id>');
      expect(await cli('users:ban', '--help')).toEqual({
        code: 0,
        stdout: expect.stringMatching(/^Usage: cli users:ban \[options\] <user_id>\n/),
        stderr: '',
      });
      expect(await cli('no-such-command')).toEqual({
        code: 1,
        stdout: '',
        stderr: "error: unknown command 'no-such-command'\n",
      });
      expect(await cli('users:ban')).toEqual({
        code: 1,
        stdout: '',
        stderr: "error: missing required argument 'user_id'\n",
      });
      expect(await cli('users:ban', 'abc')).toEqual({
        code: 1,
        stdout: '',
        stderr: 'Error: user_id must be a snowflake (a decimal id of at most 20 digits)\n',
      });
    });
  });

  it('names, in one line, a holder of the embedded database that does not share it', async () => {
    // A live process other than the CLI (this test's) holds the directory without sharing it, as
    // another CLI command or a service that is still starting does.
    const held = mkdtempSync(join(SCRATCH, 'cli-held-'));
    mkdirSync(join(held, 'pglite'));
    writeFileSync(join(held, 'pglite.pid'), String(process.pid));
    expect(await runToExit({ DATA_DIR: held }, [CLI, 'users:ban', DEMO_IDS.bob])).toEqual({
      code: 1,
      stdout: '',
      stderr: `Error: The embedded database in ${join(held, 'pglite')} is in use by process ${process.pid} (another CLI command, or a service that is still starting); run this command again once it is done, or run the service and the CLI on one PostgreSQL (DATABASE_URL)\n`,
    });
  });

  it('bans a user who has never logged in, so that their first login is refused', async () => {
    const bob = DEMO_IDS.bob;
    expect(await cli('users:ban', bob)).toEqual({
      code: 0,
      stdout: `User ${bob} is banned. They have not logged in yet: their login is refused.\n`,
      stderr: '',
    });
    await asService(async (p) => {
      const login = await demoLoginAnswer(p, bob);
      expect(login.status).toBe(403);
      expect(JSON.parse(login.body)).toEqual({
        code: 'ApiBanned',
        message: 'This account is banned from this service',
      });
    });
    const unbanned = await cli('users:unban', bob);
    expect(unbanned.code).toBe(0);
    expect(unbanned.stdout).toMatch(new RegExp(`^User ${bob} is no longer banned\\.\n`));
    // Lifting a ban that is not there is no error.
    expect(await cli('users:unban', bob)).toEqual({
      code: 0,
      stdout: `User ${bob} is not banned.\n`,
      stderr: '',
    });
  });

  it('runs as npm run cli does without building again while the build is up to date', async () => {
    const built = statSync(CLI).mtimeMs;
    const run = await runToExit({}, [join(ROOT, 'scripts', 'cli.mjs'), '--help']);
    expect(run).toEqual({ code: 0, stdout: expect.stringMatching(/^Usage: cli /), stderr: '' });
    expect(statSync(CLI).mtimeMs).toBe(built);
  });
});

/**
 * `npm start`, `npm run cli` and this file build only when something the build is made of changed:
 * the script runs in a scratch project whose "build" only records that it ran.
 */
describe('building only when stale', () => {
  const project = join(SCRATCH, 'build-project');
  const runs = join(project, 'builds.log');

  function buildIfStale(): { code: number | null; stderr: string; builds: number } {
    const run = spawnSync(process.execPath, [join(project, 'scripts', 'build-if-stale.mjs')], {
      cwd: project,
      encoding: 'utf8',
    });
    const builds = existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').length - 1 : 0;
    return { code: run.status, stderr: run.stderr, builds };
  }

  /** Sets `path`'s modification time, `seconds` from now (negative: in the past). */
  function touch(path: string, seconds = 0): void {
    const at = new Date(Date.now() + seconds * 1000);
    utimesSync(path, at, at);
  }

  beforeAll(() => {
    mkdirSync(join(project, 'scripts'), { recursive: true });
    mkdirSync(join(project, 'src'));
    mkdirSync(join(project, 'dist'));
    for (const script of ['build-if-stale.mjs', 'build.mjs']) {
      cpSync(join(ROOT, 'scripts', script), join(project, 'scripts', script));
    }
    writeFileSync(join(project, 'src', 'main.ts'), 'export {};\n');
    writeFileSync(join(project, 'src', 'main.spec.ts'), 'export {};\n');
    for (const file of [
      'tsconfig.json',
      'tsconfig.build.json',
      'nest-cli.json',
      'package-lock.json',
    ]) {
      writeFileSync(join(project, file), '{}\n');
    }
    // The build records each run, and fails while a file named FAIL exists.
    const build = `node -e "require('fs').appendFileSync('builds.log','built\\n');process.exit(require('fs').existsSync('FAIL')?2:0)"`;
    writeFileSync(join(project, 'package.json'), JSON.stringify({ scripts: { build } }));
    // Everything was last changed a while ago; a change below is one made now.
    for (const path of ['src', 'src/main.ts', 'src/main.spec.ts', 'package-lock.json']) {
      touch(join(project, path), -100);
    }
  });

  it('builds when there is no build, then not again until a source or a setting changes', () => {
    expect(buildIfStale()).toEqual({ code: 0, stderr: 'Building (no build yet)…\n', builds: 1 });
    expect(buildIfStale()).toEqual({ code: 0, stderr: '', builds: 1 });
    // A test file is not part of the build.
    touch(join(project, 'src', 'main.spec.ts'));
    expect(buildIfStale()).toEqual({ code: 0, stderr: '', builds: 1 });
    touch(join(project, 'src', 'main.ts'));
    expect(buildIfStale()).toEqual({ code: 0, stderr: 'Building (sources changed)…\n', builds: 2 });
    expect(buildIfStale()).toEqual({ code: 0, stderr: '', builds: 2 });
    // A new source file, and a changed dependency lockfile, each call for a build.
    writeFileSync(join(project, 'src', 'added.ts'), 'export {};\n');
    expect(buildIfStale().builds).toBe(3);
    touch(join(project, 'package-lock.json'));
    expect(buildIfStale().builds).toBe(4);
    expect(buildIfStale().builds).toBe(4);
  });

  it('keeps building after a failed build until one succeeds, and passes its status on', () => {
    touch(join(project, 'src', 'main.ts'));
    writeFileSync(join(project, 'FAIL'), '');
    const before = buildIfStale().builds;
    expect(buildIfStale()).toEqual({
      code: 2,
      stderr: 'Building (sources changed)…\n',
      builds: before + 1,
    });
    rmSync(join(project, 'FAIL'));
    expect(buildIfStale()).toEqual({
      code: 0,
      stderr: 'Building (sources changed)…\n',
      builds: before + 2,
    });
    expect(buildIfStale().builds).toBe(before + 2);
  });
});

/** The admin CLI beside running services on one PostgreSQL and Redis, as in production. */
describeShared('the admin CLI with Redis', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it("bans a user on every running service at once, well within the session cache's 30 s", async () => {
    const { token } = await loginAs(t, DEMO_IDS.carol);
    const me = (): Promise<{ status: number; code?: string }> =>
      t
        .http()
        .get('/sessions/@me')
        .set('Authorization', `Bearer ${token}`)
        .then((res) => ({ status: res.status, code: (res.body as { code?: string }).code }));
    // The running service now holds the session in its cache.
    expect(await me()).toEqual({ status: 200, code: undefined });
    const env = {
      DATABASE_URL: t.database.env.DATABASE_URL ?? '',
      TOKEN_ENCRYPTION_KEY: TEST_TOKEN_ENCRYPTION_KEY,
      REDIS_URL: process.env.REDIS_URL ?? '',
      REDIS_KEY_PREFIX: t.config.redisKeyPrefix,
    };

    const banned = await runToExit(env, [CLI, 'users:ban', DEMO_IDS.carol]);
    expect(banned.code).toBe(0);
    // With Redis the CLI has nothing to add: running services are told at once.
    expect(banned.stdout.trim()).toBe(`User ${DEMO_IDS.carol} is banned.`);
    expect(await eventually(me, (answer) => answer.status === 403, 2_000)).toEqual({
      status: 403,
      code: 'ApiBanned',
    });

    expect((await runToExit(env, [CLI, 'users:unban', DEMO_IDS.carol])).code).toBe(0);
    expect(await eventually(me, (answer) => answer.status === 200, 2_000)).toEqual({
      status: 200,
      code: undefined,
    });
  });
});

async function runToExit(
  env: Record<string, string>,
  args: string[] = [MAIN],
  user: { uid?: number; gid?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: serviceEnv(env), ...user });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A process that cannot start (EACCES) never closes: its error is the answer, not a hang.
  const code = await new Promise<number | null>((done) => {
    child.on('close', done);
    child.on('error', (error) => {
      stderr += error.message;
      done(127);
    });
  });
  return { code, stdout, stderr };
}

/** Whether the unprivileged user (nobody) can run this checkout's Node.js, and why not. */
function unprivilegedRun(): { ok: boolean; why: string } {
  const run = spawnSync(process.execPath, ['--version'], { cwd: tmpdir(), uid: 65534, gid: 65534 });
  if (!run.error && run.status === 0) return { ok: true, why: '' };
  return {
    ok: false,
    why: `the unprivileged user cannot run ${process.execPath} (${run.error?.message ?? `exit ${run.status}`}): the checkout is in a folder it cannot enter`,
  };
}

async function waitForHealthy(port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      await get(port, '/healthz');
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error('service did not become healthy within 30 s');
}

function get(port: number, path: string, token?: string): Promise<string> {
  return new Promise((done, fail) => {
    const headers = token ? { Authorization: token } : {};
    const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => (res.statusCode === 200 ? done(body) : fail(new Error(body))));
    });
    req.on('error', fail);
    req.end();
  });
}

interface SinkAnswer {
  data: { id: string };
}

/** One request on a new connection; rejects when the connection is refused or cut. */
function send(
  port: number,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = {};
    if (token) headers.Authorization = `Bearer ${token}`;
    if (payload !== undefined) headers['Content-Type'] = 'application/json';
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method, headers, agent: false },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => done({ status: res.statusCode ?? 0, body: text }));
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    req.end(payload);
  });
}

/** Logs a demo user in through the demo code route and POST /oauth2; returns the token. */
async function demoLogin(port: number, userId: string): Promise<string> {
  const login = await demoLoginAnswer(port, userId);
  expect(login.status).toBe(200);
  return (JSON.parse(login.body) as { token: string }).token;
}

/** POST /oauth2's answer to a demo user's login. */
async function demoLoginAnswer(
  port: number,
  userId: string,
): Promise<{ status: number; body: string }> {
  const code = JSON.parse(await get(port, `/demo/oauth2-code?user_id=${userId}`)) as {
    code: string;
    redirect_uri: string;
  };
  return send(port, 'POST', '/oauth2', null, {
    code: code.code,
    redirect_uri: code.redirect_uri,
  });
}

/** Sends the headers and half of a JSON body now, the rest on `finish()`. */
function slowPost(
  port: number,
  path: string,
): { finish(): Promise<{ status: number; body: string; connection?: string }> } {
  const payload = JSON.stringify({ hello: 'world' });
  let settle: (value: { status: number; body: string; connection?: string }) => void;
  let reject: (error: Error) => void;
  const response = new Promise<{ status: number; body: string; connection?: string }>(
    (done, fail) => {
      settle = done;
      reject = fail;
    },
  );
  const req = httpRequest(
    {
      host: '127.0.0.1',
      port,
      path,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Length': payload.length },
    },
    (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () =>
        settle({ status: res.statusCode ?? 0, body, connection: res.headers.connection }),
      );
    },
  );
  req.on('error', (error) => reject(error));
  req.write(payload.slice(0, 5));
  return {
    finish: () => {
      req.end(payload.slice(5));
      return response;
    },
  };
}
