// Builds dist/esm (ES modules) and dist/cjs (CommonJS), each with its declarations: the
// `exports` map in package.json sends `import` to one and `require` to the other.
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const tsc = resolveTsc();

// A file left from an earlier build (a module since renamed) must not ship.
rmSync(join(root, 'dist'), { recursive: true, force: true });
for (const [config, folder, type] of [
  ['tsconfig.esm.json', 'esm', 'module'],
  ['tsconfig.cjs.json', 'cjs', 'commonjs'],
]) {
  execFileSync(process.execPath, [tsc, '-p', config], { cwd: root, stdio: 'inherit' });
  // tsc emits no copy of a declaration file it reads, and the generated schema is one.
  copyFileSync(join(root, 'src', 'schema.d.ts'), join(root, 'dist', folder, 'schema.d.ts'));
  // Node.js and TypeScript take a .js file's module format from the nearest package.json.
  writeFileSync(join(root, 'dist', folder, 'package.json'), `${JSON.stringify({ type })}\n`);
}

function resolveTsc() {
  try {
    return createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    console.error(
      'Building the client needs TypeScript: run `npm ci` at the root of the repository (or `npm install` in clients/typescript) first.',
    );
    process.exit(1);
  }
}
