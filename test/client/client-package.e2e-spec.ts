import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { createTestApp, type TestApp } from 'test/support/test-app';

const ROOT = resolve(__dirname, '..', '..');
const CLIENT = join(ROOT, 'clients', 'typescript');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const PACKAGE = '@bot-management-service/client';
/** Roles of Demo Community, one per script run (the README's example takes the Helper, …104). */
const ROLES = Array.from(
  { length: 8 },
  (_, i) => `11000000000000001${String(i + 5).padStart(2, '0')}`,
);
/** The README's examples, by the file name on their first line (`// demo.mjs …`). */
const README_EXAMPLES = Object.fromEntries(
  [...readFileSync(join(CLIENT, 'README.md'), 'utf8').matchAll(/```js\n\/\/ (\S+)(.*?)```/gs)].map(
    ([, name, rest]) => [`readme-${name}`, `// ${name}${rest}`],
  ),
);

/** The Node.js releases the package supports (its `engines`): the project's, and the system's. */
const RUNTIMES = [...new Set([process.execPath, '/usr/bin/node'])]
  .filter(existsSync)
  .map((path) => ({
    path,
    version: execFileSync(path, ['--version'], { encoding: 'utf8' }).trim(),
  }))
  .filter(({ version }, i, all) => all.findIndex((r) => r.version === version) === i)
  .filter(({ version }) => Number(/^v(\d+)/.exec(version)?.[1]) >= 20);

/**
 * The demo flow, as a script author writes it: a demo code, the login, then calls with the token.
 * The same text is an ES module's, a CommonJS script's (in an async function) and a TypeScript
 * script's body, so the compiler checks what the JavaScript runs.
 */
const DEMO_FLOW = `
  const [baseUrl, guildId, roleId] = process.argv.slice(2);
  const anonymous = createBotManagementClient({ baseUrl });
  const issued = await anonymous.GET('/demo/oauth2-code');
  if (!issued.data) throw new Error(\`no demo code: \${issued.response.status}\`);
  const login = await anonymous.POST('/oauth2', {
    body: { code: issued.data.code, redirect_uri: issued.data.redirect_uri },
  });
  if (!login.data) throw new Error(\`no login: \${login.response.status}\`);

  const api = createBotManagementClient({ baseUrl, token: login.data.token });
  const me = await api.GET('/sessions/@me');
  const created = await api.settings(guildId, 'guildroles', 'Create', {
    role_id: roleId,
    perms: ['guildroles.view'],
    index: 1,
  });
  const viewed = await api.settings(guildId, 'guildroles', 'View', { role_id: roleId, limit: 25 });
  const deleted = await api.settings(guildId, 'guildroles', 'Delete', { role_id: roleId });
  const refused = await api.settings(guildId, 'guildroles', 'Delete', { role_id: roleId });
  console.log(
    JSON.stringify({
      user: me.data?.user_id,
      created: created.data?.data,
      viewed: viewed.data?.data,
      deleted: deleted.data?.data,
      refused: refused.error?.code,
    }),
  );
`;

const SCRIPTS = {
  'demo.mjs': `import { createBotManagementClient } from '${PACKAGE}';\n${DEMO_FLOW}`,
  'demo.cjs': `const { createBotManagementClient } = require('${PACKAGE}');\n\nasync function main() {${DEMO_FLOW}}\n\nmain().catch((error) => {\n  console.error(error);\n  process.exitCode = 1;\n});\n`,
  // An ES module here (the project is `"type": "module"`), compiled to out/demo.js.
  'demo.ts': `import { createBotManagementClient } from '${PACKAGE}';\n${DEMO_FLOW}`,
  // CommonJS, so the compiler reads the `require` declarations too.
  'misspelt.cts': `import { createBotManagementClient } from '${PACKAGE}';

const api = createBotManagementClient({ baseUrl: 'http://127.0.0.1:3000' });
export const misspelt = [
  api.settings('${DEMO_IDS.community}', 'guildroles', 'View', { limt: 25 }),
  api.settings('${DEMO_IDS.community}', 'protection', 'Update', { id: 'default', max_mention: 3 }),
  api.POST('/guilds/{guild_id}/settings', {
    params: { path: { guild_id: '${DEMO_IDS.community}' } },
    body: { setting: 'guildroles', operation: 'View', fields: { limt: 25 } },
  }),
];
`,
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      module: 'nodenext',
      target: 'es2022',
      strict: true,
      skipLibCheck: true,
      types: ['node'],
      outDir: 'out',
    },
    files: ['demo.ts', 'misspelt.cts'],
  }),
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The typed client as a package (clients/typescript): `npm pack` builds it, a scratch project
 * installs the tarball, and plain Node.js runs scripts that import it (ES module), require it
 * (CommonJS) or were compiled from TypeScript by tsc, against the service in demo mode.
 */
describe('the TypeScript client, packed and installed', () => {
  let app: TestApp;
  let project: string;
  let compiled: Run;

  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'bms-client-package-'));
    [app, compiled] = await Promise.all([createTestApp(), installAndCompile(project)]);
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('installs as JavaScript with declarations, an ES module and CommonJS, and nothing else', async () => {
    const installed = join(project, 'node_modules', PACKAGE);
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8'));
    expect(manifest.exports).toEqual({
      '.': {
        import: { types: './dist/esm/index.d.ts', default: './dist/esm/index.js' },
        require: { types: './dist/cjs/index.d.ts', default: './dist/cjs/index.js' },
      },
      './package.json': './package.json',
    });
    expect((await readdir(installed)).sort()).toEqual(['README.md', 'dist', 'package.json']);
    for (const [folder, type] of [
      ['esm', 'module'],
      ['cjs', 'commonjs'],
    ]) {
      expect((await readdir(join(installed, 'dist', folder))).sort()).toEqual([
        'index.d.ts',
        'index.js',
        'package.json',
        'schema.d.ts',
      ]);
      expect(
        JSON.parse(await readFile(join(installed, 'dist', folder, 'package.json'), 'utf8')),
      ).toEqual({ type });
    }
  });

  it('compiles a TypeScript script, and names the misspelt field against its own setting', () => {
    // Only misspelt.cts fails; demo.ts compiles clean (and is emitted either way).
    expect(compiled.code).toBe(2);
    const [view, update, raw, ...others] = compiled.stdout.trim().split('\n');
    expect(others).toEqual([]);
    expect(parseMisspelt(view)).toEqual({
      at: at('misspelt.cts', 'limt'),
      code: 'TS2561',
      field: 'limt',
      type: expect.stringMatching(/^\{ role_id\?: string \| undefined; index\?: number/),
      suggestion: 'limit',
    });
    expect(parseMisspelt(update)).toEqual({
      at: at('misspelt.cts', 'max_mention'),
      code: 'TS2561',
      field: 'max_mention',
      type: expect.stringMatching(/^\{ id: "default"; minimum_account_age\?: /),
      suggestion: 'max_mentions',
    });
    // Not another setting's columns (auditlog_sinks' `channel`: the union's first body)…
    expect(view).not.toContain('channel');
    expect(update).not.toContain('channel');
    // …as with the raw POST, whose body is checked against the union (the README says so).
    expect(raw).toMatch(
      /^misspelt\.cts\(9,\d+\): error TS2353: .* 'limt' does not exist in type '\(\{ id\?: string \| undefined; channel\?: string/,
    );
  });

  describe.each(RUNTIMES)('on Node.js $version', ({ path }) => {
    it.each(['demo.mjs', 'demo.cjs', 'out/demo.js'])(
      '%s logs in through the demo flow and runs settings operations',
      async (script) => {
        const role = ROLES.shift() ?? '';
        const baseUrl = `http://127.0.0.1:${app.port}`;
        const run = await exec(path, [script, baseUrl, DEMO_IDS.community, role], project);
        expect(run).toMatchObject({ code: 0, stderr: '' });
        const entry = {
          role_id: role,
          perms: ['guildroles.view'],
          index: 1,
          created_at: expect.any(String),
          created_by: DEMO_IDS.alice,
          last_updated_at: expect.any(String),
          last_updated_by: DEMO_IDS.alice,
          version: 1,
        };
        expect(JSON.parse(run.stdout)).toEqual({
          user: DEMO_IDS.alice,
          created: entry,
          viewed: [entry],
          deleted: { role_id: role },
          refused: 'NotFound',
        });
      },
    );
  });

  it.each(Object.keys(README_EXAMPLES))("the README's %s runs as written", async (script) => {
    const env = { BMS_URL: `http://127.0.0.1:${app.port}` };
    const run = await exec(process.execPath, [script], project, env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const [user, ...rest] = run.stdout.trim().split('\n');
    expect(user).toBe(DEMO_IDS.alice);
    // The ES module goes on to the settings: the Helper role's permission, listed.
    if (script.endsWith('.mjs')) {
      expect(rest.join('\n')).toMatch(
        /role_id: '1100000000000000104',\s+perms: \[ 'guildroles\.view' \],\s+index: 1,/,
      );
    } else expect(rest).toEqual([]);
  });
});

/**
 * Packs the client (its `prepare` script builds dist/), installs the tarball into `project` and
 * compiles the TypeScript there.
 */
async function installAndCompile(project: string): Promise<Run> {
  const packed = join(project, 'packed');
  await mkdir(packed);
  const pack = await exec('npm', ['pack', '--pack-destination', packed], CLIENT);
  if (pack.code !== 0) throw new Error(`npm pack failed:\n${pack.stdout}\n${pack.stderr}`);
  const [tarball] = await readdir(packed);
  await writeScratchProject(project, `packed/${tarball}`);
  // Offline: the registry metadata and tarballs come from the npm cache that installing the
  // repository's own dependencies filled, so the test needs no network.
  const install = await exec('npm', ['ci', '--offline', '--no-audit', '--no-fund'], project);
  if (install.code !== 0) throw new Error(`npm ci failed:\n${install.stdout}\n${install.stderr}`);
  for (const [name, text] of Object.entries({ ...SCRIPTS, ...README_EXAMPLES })) {
    await writeFile(join(project, name), text);
  }
  return exec(process.execPath, [TSC, '-p', 'tsconfig.json'], project);
}

/**
 * The scratch project: the packed client and @types/node, with a lockfile that pins them and
 * their dependencies to the repository's lockfile, so `npm ci --offline` finds them in the cache.
 */
async function writeScratchProject(project: string, tarball: string): Promise<void> {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version: string; dependencies?: Record<string, string> }>;
  };
  const manifest = JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8')) as {
    version: string;
    license: string;
    dependencies: Record<string, string>;
  };
  const packages: Record<string, object> = {};
  const pin = (name: string): void => {
    const key = `node_modules/${name}`;
    if (packages[key]) return;
    // As this project's own dependency, not the repository's development one.
    const entry: Record<string, unknown> = { ...lock.packages[key] };
    delete entry.dev;
    delete entry.devOptional;
    packages[key] = entry;
    for (const dependency of Object.keys(lock.packages[key].dependencies ?? {})) pin(dependency);
  };
  const typesNode = lock.packages['node_modules/@types/node'].version;
  const dependencies = { [PACKAGE]: `file:${tarball}`, '@types/node': typesNode };
  const tarballBytes = await readFile(join(project, tarball));
  packages[`node_modules/${PACKAGE}`] = {
    version: manifest.version,
    resolved: `file:${tarball}`,
    integrity: `sha512-${createHash('sha512').update(tarballBytes).digest('base64')}`,
    license: manifest.license,
    dependencies: manifest.dependencies,
  };
  for (const name of [...Object.keys(manifest.dependencies), '@types/node']) pin(name);
  const project_ = { name: 'scratch', private: true, type: 'module', dependencies };
  await writeFile(join(project, 'package.json'), JSON.stringify(project_, null, 2));
  await writeFile(
    join(project, 'package-lock.json'),
    JSON.stringify(
      {
        name: 'scratch',
        lockfileVersion: 3,
        requires: true,
        packages: { '': { name: 'scratch', dependencies }, ...packages },
      },
      null,
      2,
    ),
  );
}

/** Where `text` first occurs in one of SCRIPTS, as tsc reports a position: `file(line,column)`. */
function at(file: keyof typeof SCRIPTS, text: string): string {
  const lines = SCRIPTS[file].split('\n');
  const line = lines.findIndex((content) => content.includes(text));
  return `${file}(${line + 1},${lines[line].indexOf(text) + 1})`;
}

/** One tsc error about an unknown property of an object literal, in parts. */
function parseMisspelt(line: string): Record<string, string> {
  const parts =
    /^(\S+\(\d+,\d+\)): error (TS\d+): .* but '(\w+)' does not exist in type '(.*)'\. Did you mean to write '(\w+)'\?$/.exec(
      line,
    );
  if (!parts) return { line };
  const [, position, code, field, type, suggestion] = parts;
  return { at: position, code, field, type, suggestion };
}

/** Runs a command to its end; a failure is an answer (`code`), not an exception. */
function exec(
  command: string,
  args: string[],
  cwd: string,
  extra: NodeJS.ProcessEnv = {},
): Promise<Run> {
  // Not the settings of the npm that may be running this test (npm_config_*), nor Jest's flags.
  const env = Object.fromEntries(
    Object.entries({ ...process.env, ...extra }).filter(
      ([key]) => !/^npm_/i.test(key) && key !== 'NODE_OPTIONS',
    ),
  );
  return new Promise((done) => {
    execFile(command, args, { cwd, env, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}
