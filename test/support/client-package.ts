import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join, resolve } from 'node:path';

// A client package (clients/*) as its users get it: `npm pack` builds it, a scratch project
// installs the tarball, and plain Node.js runs scripts that import or require it.

const ROOT = resolve(__dirname, '..', '..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The Node.js releases the client packages support (their `engines`): the project's, and the system's. */
export const RUNTIMES = [...new Set([process.execPath, '/usr/bin/node'])]
  .filter(existsSync)
  .map((path) => ({
    path,
    version: execFileSync(path, ['--version'], { encoding: 'utf8' }).trim(),
  }))
  .filter(({ version }, i, all) => all.findIndex((r) => r.version === version) === i)
  .filter(({ version }) => Number(/^v(\d+)/.exec(version)?.[1]) >= 20);

/** Every client package's `exports` map: `import` reads dist/esm, `require` dist/cjs. */
export const PACKAGE_EXPORTS = {
  '.': {
    import: { types: './dist/esm/index.d.ts', default: './dist/esm/index.js' },
    require: { types: './dist/cjs/index.d.ts', default: './dist/cjs/index.js' },
  },
  './package.json': './package.json',
};

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Packs the package in `folder` (its `prepare` script builds dist/), installs the tarball into
 * `project` with `@types/node`, offline (and links `links`), writes `files` there (scripts and a tsconfig.json) and
 * compiles them with tsc: the compiler's answer is returned.
 */
export async function installAndCompile(
  project: string,
  folder: string,
  files: Record<string, string>,
  /**
   * Packages the project takes from the repository's own node_modules, linked (a bot's
   * `discord.js`: installing it offline would need registry metadata the cache does not hold).
   */
  links: string[] = [],
): Promise<Run> {
  const packed = join(project, 'packed');
  await mkdir(packed);
  // Packing builds the package's dist/ in place: two test files packing one package at once (in
  // parallel workers) would pack each other's half-built dist/.
  const pack = await whileHolding(`pack-${createHash('sha256').update(folder).digest('hex')}`, () =>
    exec('npm', ['pack', '--pack-destination', packed], folder),
  );
  if (pack.code !== 0) throw new Error(`npm pack failed:\n${pack.stdout}\n${pack.stderr}`);
  const [tarball] = await readdir(packed);
  await writeScratchProject(project, folder, `packed/${tarball}`, ['@types/node']);
  // Offline: the registry metadata and tarballs come from the npm cache that installing the
  // repository's own dependencies filled, so the test needs no network.
  const install = await exec('npm', ['ci', '--offline', '--no-audit', '--no-fund'], project);
  if (install.code !== 0) throw new Error(`npm ci failed:\n${install.stdout}\n${install.stderr}`);
  for (const name of links) {
    await symlink(join(ROOT, 'node_modules', name), join(project, 'node_modules', name), 'dir');
  }
  for (const [name, text] of Object.entries(files)) await writeFile(join(project, name), text);
  return exec(process.execPath, [TSC, '-p', 'tsconfig.json'], project);
}

/**
 * Runs `work` while holding a lock that every test process sees: a directory in the system's
 * temporary folder, made atomically. A lock older than STALE_LOCK_MS (its holder was killed) is
 * taken over; the wait is bounded by the test's own timeout.
 */
async function whileHolding<T>(name: string, work: () => Promise<T>): Promise<T> {
  const lock = join(tmpdir(), `bms-test-${name}.lock`);
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const since = await stat(lock).then(
        (info) => Date.now() - info.mtimeMs,
        () => 0,
      );
      if (since > STALE_LOCK_MS) await rm(lock, { recursive: true, force: true });
      else await sleep(200);
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/** A held lock older than this was left by a test process that was killed. */
const STALE_LOCK_MS = 5 * 60_000;

/** What the scratch project holds of an installed package: its files and each build's. */
export async function installedFiles(
  project: string,
  name: string,
): Promise<{
  exports: unknown;
  files: string[];
  builds: Record<string, { files: string[]; type: unknown }>;
}> {
  const installed = join(project, 'node_modules', name);
  const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8'));
  const builds: Record<string, { files: string[]; type: unknown }> = {};
  for (const folder of await readdir(join(installed, 'dist'))) {
    const build = join(installed, 'dist', folder);
    builds[folder] = {
      files: (await readdir(build)).sort(),
      type: JSON.parse(await readFile(join(build, 'package.json'), 'utf8')).type,
    };
  }
  return { exports: manifest.exports, files: (await readdir(installed)).sort(), builds };
}

/** The README's examples, by the file name on their first line (`// demo.mjs …`), as `readme-…`. */
export function readmeExamples(readme: string): Record<string, string> {
  return Object.fromEntries(
    [...readFileSync(readme, 'utf8').matchAll(/```js\n\/\/ (\S+)(.*?)```/gs)].map(
      ([, name, rest]) => [`readme-${name}`, `// ${name}${rest}`],
    ),
  );
}

/**
 * A script's `body` (written with top-level await, as in an ES module) as CommonJS: in an async
 * function whose failure sets the exit code, after `header` (its require or import).
 */
export function inAsyncMain(header: string, body: string): string {
  return `${header}\n\nasync function main() {${body}}\n\nmain().catch((error) => {\n  console.error(error);\n  process.exitCode = 1;\n});\n`;
}

/** The scratch project's tsconfig.json: `files` compiled to out/, as a script author's. */
export function scratchTsconfig(files: string[]): string {
  return JSON.stringify({
    compilerOptions: {
      module: 'nodenext',
      target: 'es2022',
      strict: true,
      skipLibCheck: true,
      types: ['node'],
      outDir: 'out',
    },
    files,
  });
}

/**
 * The scratch project: the packed package and `extra` packages, with a lockfile that pins them and their
 * dependencies to the repository's lockfile, so `npm ci --offline` finds them in the cache.
 */
async function writeScratchProject(
  project: string,
  folder: string,
  tarball: string,
  extra: string[],
): Promise<void> {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version: string; dependencies?: Record<string, string> }>;
  };
  const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
    license: string;
    dependencies?: Record<string, string>;
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
  const dependencies: Record<string, string> = { [manifest.name]: `file:${tarball}` };
  for (const name of extra) dependencies[name] = lock.packages[`node_modules/${name}`].version;
  const tarballBytes = await readFile(join(project, tarball));
  packages[`node_modules/${manifest.name}`] = {
    version: manifest.version,
    resolved: `file:${tarball}`,
    integrity: `sha512-${createHash('sha512').update(tarballBytes).digest('base64')}`,
    license: manifest.license,
    dependencies: manifest.dependencies,
  };
  for (const name of [...Object.keys(manifest.dependencies ?? {}), ...extra]) pin(name);
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

/** Runs a command to its end; a failure is an answer (`code`), not an exception. */
export function exec(
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
