import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { exec, installAndCompile, scratchTsconfig, type Run } from 'test/support/client-package';

const ROOT = resolve(__dirname, '..', '..');
const EXAMPLE = join(ROOT, 'examples', 'discord-bot');
const REPORTER = join(ROOT, 'clients', 'bot-reporter');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
/** The example's files a bot author copies (the fake gateway is the repository's). */
const FILES = ['bot.mjs', 'bot.cjs', 'sharded.mjs'];

/**
 * The examples as their headers say to use them: JavaScript copied into a bot's own project,
 * importing `@bot-management-service/bot-reporter/discord` (installed from its packed tarball, with
 * discord.js at the repository's version), type-checked (checkJs) in a project that is an ES
 * module and in one that is CommonJS.
 */
describe('examples/discord-bot copied into a bot’s own project', () => {
  let project: string;
  let esm: Run;

  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'bms-discord-bot-'));
    const files: Record<string, string> = {};
    for (const name of FILES) files[name] = readFileSync(join(EXAMPLE, name), 'utf8');
    const tsconfig = JSON.parse(scratchTsconfig(FILES)) as { compilerOptions: object };
    Object.assign(tsconfig.compilerOptions, { allowJs: true, checkJs: true, noEmit: true });
    files['tsconfig.json'] = JSON.stringify(tsconfig);
    esm = await installAndCompile(project, REPORTER, files, ['discord.js']);
  }, 240_000);

  afterAll(async () => {
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('imports the package, not the repository’s paths', () => {
    for (const name of FILES) {
      expect(readFileSync(join(EXAMPLE, name), 'utf8')).not.toMatch(/'(\.\.\/|clients\/)/);
    }
  });

  it('type-checks as an ES module ("type": "module", module nodenext)', () => {
    expect(esm).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('type-checks as CommonJS (no "type", module nodenext)', async () => {
    const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as {
      type?: string;
    };
    delete manifest.type;
    await writeFile(join(project, 'package.json'), JSON.stringify(manifest, null, 2));
    const cjs = await exec(process.execPath, [TSC, '-p', 'tsconfig.json'], project);
    expect(cjs).toEqual({ code: 0, stdout: '', stderr: '' });
  }, 120_000);
});
