import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import type { EmulatorSeed } from 'src/platform/emulator/emulator.seed';
import { createApiToken } from 'test/support/auth';
import {
  exec,
  inAsyncMain,
  installedFiles,
  installAndCompile,
  PACKAGE_EXPORTS,
  readmeExamples,
  RUNTIMES,
  scratchTsconfig,
  type Run,
} from 'test/support/client-package';
import { botAndAliceGuild, DEMO_REDIRECT, liveModeEnv, useEmulator } from 'test/support/platform';
import { createTestApp, type TestApp } from 'test/support/test-app';

const ROOT = resolve(__dirname, '..', '..');
const REPORTER = join(ROOT, 'clients', 'bot-reporter');
const PACKAGE = '@bot-management-service/bot-reporter';
const README_EXAMPLES = readmeExamples(join(REPORTER, 'README.md'));
/** The scripts each runtime runs: an ES module, CommonJS, and both compiled from TypeScript. */
const RUNS = ['report.mjs', 'report.cjs', 'out/report.js', 'out/report.cjs'];

/** Guilds of Alice's the bot joins, one per script run. */
const JOINED = Array.from(
  { length: RUNS.length * RUNTIMES.length },
  (_, i) => `11000000000000009${String(i).padStart(2, '0')}`,
);
const SEED: EmulatorSeed = {
  ...DEMO_SEED,
  guilds: [...DEMO_SEED.guilds, ...JOINED.map(botAndAliceGuild)],
};

/**
 * A bot's report, as its author writes it: shard 0 of 1 becomes READY in one guild, then joins
 * another. The same text is an ES module's, a CommonJS script's (in an async function) and a
 * TypeScript script's body, so the compiler checks what the JavaScript runs.
 */
const REPORT = `
  const [baseUrl, token, readyGuild, joinedGuild] = process.argv.slice(2);
  const reporter = createMembershipReporter({
    baseUrl,
    token,
    onError: (error) => console.error(\`membership feed: \${error.message}\`),
  });
  const progress = await reporter.snapshot(0, 1, [readyGuild]);
  reporter.joined(0, joinedGuild);
  await reporter.flush();
  const status = await reporter.status();
  await reporter.close();
  console.log(JSON.stringify({ progress, status }));
`;

const IMPORT = `import { createMembershipReporter } from '${PACKAGE}';`;
const SCRIPTS = {
  'report.mjs': `${IMPORT}\n${REPORT}`,
  'report.cjs': inAsyncMain(`const { createMembershipReporter } = require('${PACKAGE}');`, REPORT),
  // An ES module here (the project is `"type": "module"`), compiled to out/report.js.
  'report.ts': `${IMPORT}\n${REPORT}`,
  // CommonJS, compiled to out/report.cjs: the compiler reads the `require` declarations.
  'report.cts': inAsyncMain(IMPORT, REPORT),
  'tsconfig.json': scratchTsconfig(['report.ts', 'report.cts']),
};

/**
 * The membership reporter as a package (clients/bot-reporter): `npm pack` builds it, a scratch
 * project installs the tarball, and plain Node.js runs a bot's report that imports it (ES module),
 * requires it (CommonJS) or was compiled from TypeScript by tsc, against the service in live mode.
 */
describe('the bot reporter, packed and installed', () => {
  const platform = useEmulator(SEED);
  let app: TestApp;
  let project: string;
  let compiled: Run;
  let login: string;
  let token: string;

  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'bms-bot-reporter-package-'));
    const env = { ...liveModeEnv(platform()), ROOT_USERS: DEMO_IDS.alice };
    [app, compiled] = await Promise.all([
      createTestApp({ env }),
      installAndCompile(project, REPORTER, { ...SCRIPTS, ...README_EXAMPLES }),
    ]);
    const code = platform().issueCode({ userId: DEMO_IDS.alice, redirectUri: DEMO_REDIRECT });
    const res = await app.http().post('/oauth2').send({ code, redirect_uri: DEMO_REDIRECT });
    login = res.body.token as string;
    token = (await createApiToken(app, login, { name: 'bot' })).token;
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    if (project) await rm(project, { recursive: true, force: true });
  });

  /** What the service says of the feed, and which of Alice's guilds it says the bot is in. */
  const feed = async (): Promise<Record<string, unknown>> => {
    const res = await app
      .http()
      .get('/internal/bot-guilds')
      .set('Authorization', `Bearer ${token}`);
    return res.body as Record<string, unknown>;
  };
  const botInGuilds = async (): Promise<string[]> => {
    const res = await app.http().get('/users/@me/guilds').set('Authorization', `Bearer ${login}`);
    return res.body.bot_in_guilds as string[];
  };

  it('installs as JavaScript with declarations, an ES module and CommonJS, and nothing else', async () => {
    // Every module of the package's source, tests aside: a new one is packed without a list here.
    const modules = readdirSync(resolve(__dirname, '../../clients/bot-reporter/src'))
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'))
      .map((file) => file.slice(0, -'.ts'.length));
    expect(modules).toEqual(expect.arrayContaining(['contract', 'index', 'reporter']));
    const files = modules
      .flatMap((module) => [`${module}.d.ts`, `${module}.js`])
      .concat('package.json')
      .sort();
    expect(await installedFiles(project, PACKAGE)).toEqual({
      // The discord.js integration is its own entry, so the package loads without discord.js.
      exports: {
        ...PACKAGE_EXPORTS,
        './discord': {
          import: { types: './dist/esm/discord.d.ts', default: './dist/esm/discord.js' },
          require: { types: './dist/cjs/discord.d.ts', default: './dist/cjs/discord.js' },
        },
      },
      files: ['README.md', 'dist', 'package.json'],
      builds: { esm: { files, type: 'module' }, cjs: { files, type: 'commonjs' } },
    });
  });

  it('compiles a TypeScript report, as an ES module and as CommonJS', () => {
    expect(compiled).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  describe.each(RUNTIMES)('on Node.js $version', ({ path }) => {
    it.each(RUNS)(
      '%s reports a snapshot and a join, and the service holds them',
      async (script) => {
        const joined = JOINED.shift() ?? '';
        const baseUrl = `http://127.0.0.1:${app.port}`;
        const run = await exec(path, [script, baseUrl, token, DEMO_IDS.community, joined], project);
        expect(run).toMatchObject({ code: 0, stderr: '' });
        const { progress, status } = JSON.parse(run.stdout);
        expect(progress).toEqual({
          shard_id: 0,
          snapshot_at: expect.any(String),
          received: 1,
          total: 1,
          complete: true,
        });
        const shard = {
          shard_id: 0,
          guilds: 2,
          snapshot_at: progress.snapshot_at,
          reported_at: expect.any(String),
          live: true,
        };
        const live = { live: true, shard_count: 1, stale_after: 120, guilds: 2, shards: [shard] };
        expect(status).toEqual(live);
        expect(await feed()).toEqual(live);
        // The snapshot left the guild an earlier run joined; this run's join followed it.
        expect(await botInGuilds()).toEqual([DEMO_IDS.community, joined]);
      },
    );
  });

  it.each(Object.keys(README_EXAMPLES))("the README's %s runs as written", async (script) => {
    const env = { BMS_URL: `http://127.0.0.1:${app.port}`, BMS_TOKEN: token };
    const run = await exec(process.execPath, [script], project, env);
    const { live, shard_count, guilds } = await feed();
    expect(run).toEqual({
      code: 0,
      stdout: `feed live: ${String(live)}; shards: ${String(shard_count)}; guilds: ${String(guilds)}\n`,
      stderr: '',
    });
  });
});
