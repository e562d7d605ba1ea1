import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
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
import { createTestApp, type TestApp } from 'test/support/test-app';

const ROOT = resolve(__dirname, '..', '..');
const CLIENT = join(ROOT, 'clients', 'typescript');
const PACKAGE = '@bot-management-service/client';
/** Roles of Demo Community, one per script run (the README's example takes the Helper, …104). */
const ROLES = Array.from(
  { length: 8 },
  (_, i) => `11000000000000001${String(i + 5).padStart(2, '0')}`,
);
const README_EXAMPLES = readmeExamples(join(CLIENT, 'README.md'));

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
  'demo.cjs': inAsyncMain(
    `const { createBotManagementClient } = require('${PACKAGE}');`,
    DEMO_FLOW,
  ),
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
  api.GET('/sessions/@mee'),
];
`,
  'tsconfig.json': scratchTsconfig(['demo.ts', 'misspelt.cts']),
};

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
    [app, compiled] = await Promise.all([
      createTestApp(),
      installAndCompile(project, CLIENT, { ...SCRIPTS, ...README_EXAMPLES }),
    ]);
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('installs as JavaScript with declarations, an ES module and CommonJS, and nothing else', async () => {
    const files = ['index.d.ts', 'index.js', 'package.json', 'schema.d.ts'];
    expect(await installedFiles(project, PACKAGE)).toEqual({
      exports: PACKAGE_EXPORTS,
      files: ['README.md', 'dist', 'package.json'],
      builds: { esm: { files, type: 'module' }, cjs: { files, type: 'commonjs' } },
    });
  });

  it('compiles a TypeScript script, and names the misspelt field against its own setting', () => {
    // Only misspelt.cts fails; demo.ts compiles clean (and is emitted either way).
    expect(compiled.code).toBe(2);
    const [view, update, raw, path, ...others] = compiled.stdout.trim().split('\n');
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
    // A misspelt path is named as a path that is not the API's, not as a missing argument.
    expect(path).toBe(
      `${at('misspelt.cts', "'/sessions/@mee'")}: error TS2345: Argument of type '"/sessions/@mee"' is not assignable to parameter of type 'ApiPath<"get">'.`,
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
