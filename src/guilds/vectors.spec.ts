import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const SHARED = join(ROOT, '..', 'shared', 'reference');
const FILES = ['permission-vectors.json', 'permission-string-vectors.json'];

// The repository carries copies of the reference vectors; when the reference is checked out beside
// it, the copies must be identical.
const describeWithReference = existsSync(SHARED) ? describe : describe.skip;

describeWithReference('reference vector copies', () => {
  it.each(FILES)('%s matches the shared reference', (file) => {
    const copy = readFileSync(join(ROOT, 'test', 'vectors', file), 'utf8');
    expect(copy).toBe(readFileSync(join(SHARED, file), 'utf8'));
  });
});
