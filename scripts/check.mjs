// `npm run check`: every static check CI runs, on one build. Builds when the build is stale
// (scripts/build-if-stale.mjs), then runs the checks two at a time (the machine's cores) and
// reports each with its time; exits 1 when any failed, after printing what it said. Plain
// JavaScript, as it runs before any build. CONTRIBUTING.md, "What CI checks".
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { buildIfStale } from './build-if-stale.mjs';

const ROOT = join(import.meta.dirname, '..');
const bin = (name) => join(ROOT, 'node_modules', '.bin', name);
const node = process.execPath;

/** Each check: its name and the commands it runs in turn (each must exit 0). */
const CHECKS = [
  ['lint (type-aware ESLint)', [[bin('eslint'), '.']]],
  ['types (tsc, tests included)', [[bin('tsc'), '--noEmit', '-p', 'tsconfig.json']]],
  ['format (Prettier)', [[bin('prettier'), '--check', '.']]],
  [
    'module boundaries and the charts in docs/',
    [
      [bin('depcruise'), 'src', '--config', '.dependency-cruiser.js'],
      [node, 'dist/scripts/module-graph.js', '--check'],
    ],
  ],
  [
    'OpenAPI document, its lint and the typed client',
    [
      [node, 'dist/scripts/openapi.js', '--check'],
      [bin('redocly'), 'lint', 'openapi.json'],
      [
        bin('openapi-typescript'),
        'openapi.json',
        '-o',
        'clients/typescript/src/schema.d.ts',
        '--check',
      ],
    ],
  ],
  [
    // On the embedded engine unless DATABASE_URL names a PostgreSQL server (ormconfig.ts).
    'migrations against the entities',
    [
      [
        bin('typeorm'),
        '-d',
        'dist/ormconfig.js',
        'migration:generate',
        '--check',
        'src/database/migrations/Drift',
      ],
    ],
  ],
];

/** The project's Node.js first on PATH, so that tools started by name run on it too. */
const env = {
  ...process.env,
  PATH: `${join(ROOT, 'node_modules', 'node', 'bin')}:${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
};

function run([command, ...args]) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

async function check([name, commands]) {
  const started = performance.now();
  let output = '';
  for (const command of commands) {
    const result = await run(command);
    output += result.output;
    if (result.code !== 0) return { name, ok: false, output, seconds: since(started) };
  }
  return { name, ok: true, output, seconds: since(started) };
}

const since = (started) => ((performance.now() - started) / 1000).toFixed(1);

const started = performance.now();
const built = buildIfStale();
if (built !== 0) process.exit(built);
console.log(`build: up to date (${since(started)} s)`);

const queue = [...CHECKS];
const results = [];
await Promise.all(
  [1, 2].map(async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const result = await check(next);
      console.log(`${result.ok ? 'ok    ' : 'FAILED'} ${result.name} (${result.seconds} s)`);
      results.push(result);
    }
  }),
);
const failed = results.filter((result) => !result.ok);
for (const result of failed) console.log(`\n--- ${result.name} ---\n${result.output.trimEnd()}`);
console.log(
  `\n${failed.length === 0 ? 'Every check passed' : `${failed.length} of ${results.length} checks failed`} in ${since(started)} s`,
);
process.exit(failed.length === 0 ? 0 : 1);
