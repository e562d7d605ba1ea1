// Removes from dist/ what the build made of sources that are gone (deleted or renamed). The build
// writes dist/ in place rather than emptying it first, so a running service or CLI keeps its
// files; but a compiled migration or entity left behind would still match the globs TypeORM loads.
// Plain JavaScript, so that it also runs before a build (`npm run start:dev`).
import { existsSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const DIST = join(ROOT, 'dist');

/** Prunes `directory`; true when nothing is left in it. */
function prune(directory, removed) {
  let kept = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (prune(path, removed)) rmdirSync(path);
      else kept += 1;
      continue;
    }
    const output = /^(.+)\.js(\.map)?$/.exec(relative(DIST, path));
    if (output && !existsSync(join(ROOT, `${output[1]}.ts`))) {
      rmSync(path);
      removed.push(relative(ROOT, path));
    } else {
      kept += 1;
    }
  }
  return kept === 0;
}

const removed = [];
if (existsSync(DIST)) prune(DIST, removed);
if (removed.length > 0) {
  console.log(`Removed the build outputs of deleted sources: ${removed.join(', ')}`);
}
