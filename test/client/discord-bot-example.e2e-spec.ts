import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { exec, installAndCompile, scratchTsconfig, type Run } from 'test/support/client-package';

const ROOT = resolve(__dirname, '..', '..');
const EXAMPLE = join(ROOT, 'examples', 'discord-bot');
const REPORTER = join(ROOT, 'clients', 'bot-reporter');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
/** The example's files a bot author copies (the specs and the fake gateway are the repository's). */
const FILES = ['bot.ts', 'guild-state.ts', 'membership.ts'];

/**
 * The example as its header says to use it: copied into a bot's own project, importing the
 * reporter as `@bot-management-service/bot-reporter` (installed from its packed tarball, with
 * discord.js at the repository's version), type-checked as an ES module and as CommonJS.
 */
describe('examples/discord-bot copied into a bot’s own project', () => {
  let project: string;
  let esm: Run;

  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'bms-discord-bot-'));
    const files: Record<string, string> = {};
    for (const name of FILES) {
      files[name] = readFileSync(join(EXAMPLE, name), 'utf8').replaceAll(
        "'clients/bot-reporter/src'",
        "'@bot-management-service/bot-reporter'",
      );
    }
    files['tsconfig.json'] = scratchTsconfig(FILES);
    esm = await installAndCompile(project, REPORTER, files, ['discord.js']);
  }, 240_000);

  afterAll(async () => {
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('imports the package, not the repository’s path', () => {
    for (const name of FILES) {
      expect(readFileSync(join(EXAMPLE, name), 'utf8')).not.toMatch(/from '\.\.\//);
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
