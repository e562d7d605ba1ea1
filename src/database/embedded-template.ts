import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Runs in a child process: creates a PGlite database in the given directory (initdb) and closes it.
 * Kept in a child because initdb leaves hundreds of MiB resident in the WebAssembly heap, memory
 * that the process never gets back; the child's ends with it.
 */
const INITDB_SCRIPT = `
const [entry, directory] = process.argv.slice(1);
require(entry).PGlite.create(directory).then((db) => db.close()).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
`;

let preparing: Promise<string> | null = null;

/**
 * A freshly initialised PGlite data directory, made once per PGlite version (under
 * `node_modules/.cache`, beside the PGlite it belongs to) and copied for every new embedded
 * database: a copy takes a fraction of a second, initdb several seconds. `npm run build` prepares
 * it, so a first start does not wait for it.
 */
export function embeddedTemplate(): Promise<string> {
  preparing ??= prepareTemplate().catch((error: unknown) => {
    preparing = null;
    throw error;
  });
  return preparing;
}

/** Fills `directory` from the template when it is missing or empty; leaves an existing one alone. */
export async function seedDataDirectory(directory: string): Promise<void> {
  if (existsSync(directory) && readdirSync(directory).length > 0) return;
  const template = await embeddedTemplate();
  // Copied beside the target and renamed into place, so an interrupted copy is never opened.
  const partial = `${directory}.partial`;
  rmSync(partial, { recursive: true, force: true });
  cpSync(template, partial, { recursive: true });
  rmSync(directory, { recursive: true, force: true });
  renameSync(partial, directory);
}

async function prepareTemplate(): Promise<string> {
  const entry = require.resolve('@electric-sql/pglite');
  return buildDataDirectory(templateDirectory(entry), (directory) => initdb(entry, directory));
}

/**
 * A data directory at `target`, made by `build` unless it is there already. It is built in a
 * directory of its own beside `target` and renamed into place: an interrupted build leaves nothing
 * half made, and processes building it at once each keep a whole one (another's is as good as
 * ours). `build` is given a path that does not exist yet.
 */
export async function buildDataDirectory(
  target: string,
  build: (directory: string) => Promise<void>,
): Promise<string> {
  if (existsSync(join(target, 'PG_VERSION'))) return target;
  mkdirSync(dirname(target), { recursive: true });
  const work = mkdtempSync(`${target}.partial-`);
  try {
    const directory = join(work, 'pglite');
    await build(directory);
    renameSync(directory, target);
  } catch (error) {
    if (!existsSync(join(target, 'PG_VERSION'))) throw error;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return target;
}

async function initdb(entry: string, directory: string): Promise<void> {
  try {
    await run(process.execPath, ['-e', INITDB_SCRIPT, entry, directory]);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim().split('\n')[0];
    throw new Error(
      `Initialising the embedded database template failed: ${stderr ?? String(error)}`,
    );
  }
}

/** `<node_modules>/.cache/bot-management-service/pglite-<version>`, for the PGlite at `entry`. */
function templateDirectory(entry: string): string {
  const marker = `${sep}node_modules${sep}`;
  const at = entry.lastIndexOf(`${marker}@electric-sql${sep}pglite${sep}`);
  if (at < 0) throw new Error(`PGlite is not installed under node_modules (${entry})`);
  const nodeModules = entry.slice(0, at + marker.length);
  const manifest = join(nodeModules, '@electric-sql', 'pglite', 'package.json');
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  return join(nodeModules, '.cache', 'bot-management-service', `pglite-${version}`);
}
