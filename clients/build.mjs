// Builds one client package (the folder given, or the current one: npm runs `prepare` and `build`
// in the package's folder): dist/esm (ES modules) and dist/cjs (CommonJS), each with its
// declarations, from the package's tsconfig.build.json. The package's `exports` map sends `import`
// to one and `require` to the other.
//
// Every package's `prepare` runs this file from the repository: npm runs `prepare` in the package's
// own folder when it packs it (`npm pack`, or `npm install <folder>` with --install-links) or links
// it, and never when it installs a packed tarball, which carries dist/ already.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? '.');
const tsc = resolveTsc();
const config = join(root, 'tsconfig.build.json');
const formats = [
  { folder: 'esm', type: 'module', options: [] },
  // The ES module build has checked the same sources: this one only emits.
  {
    folder: 'cjs',
    type: 'commonjs',
    options: [
      '--module',
      'commonjs',
      '--moduleResolution',
      'node10',
      '--esModuleInterop',
      '--noCheck',
    ],
  },
];
// tsc emits no copy of a declaration file it reads (clients/typescript's generated schema).
const declarations = readdirSync(join(root, 'src'), { recursive: true }).filter((file) =>
  file.endsWith('.d.ts'),
);

// A file left from an earlier build (a module since renamed) must not ship.
rmSync(join(root, 'dist'), { recursive: true, force: true });
for (const { folder, type, options } of formats) {
  const out = join(root, 'dist', folder);
  execFileSync(process.execPath, [tsc, '-p', config, '--outDir', out, ...options], {
    cwd: root,
    stdio: 'inherit',
  });
  for (const file of declarations) {
    mkdirSync(dirname(join(out, file)), { recursive: true });
    copyFileSync(join(root, 'src', file), join(out, file));
  }
  // Node.js and TypeScript take a .js file's module format from the nearest package.json.
  writeFileSync(join(out, 'package.json'), `${JSON.stringify({ type })}\n`);
}

/** TypeScript, as the package finds it: its own node_modules, then the repository's. */
function resolveTsc() {
  try {
    return createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    console.error(
      `Building ${root} needs TypeScript: run \`npm ci\` at the root of the repository (or \`npm install\` in the package's folder) first.`,
    );
    process.exit(1);
  }
}
