import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDataDirectory } from 'src/database/embedded-template';

describe('buildDataDirectory', () => {
  let root: string;
  let target: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'bms-build-data-'));
    target = join(root, 'cache', 'template');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** What a build makes: a data directory (PG_VERSION marks a whole one). */
  function makeData(directory: string): void {
    mkdirSync(directory);
    writeFileSync(join(directory, 'PG_VERSION'), '17\n');
  }

  it('builds a missing directory in a place of its own and renames it into place', async () => {
    const built: string[] = [];
    const result = await buildDataDirectory(target, (directory) => {
      expect(existsSync(directory)).toBe(false);
      expect(directory.startsWith(`${target}.partial-`)).toBe(true);
      built.push(directory);
      makeData(directory);
      return Promise.resolve();
    });
    expect(result).toBe(target);
    expect(built).toHaveLength(1);
    expect(existsSync(join(target, 'PG_VERSION'))).toBe(true);
    // Nothing is left beside it.
    expect(readdirSync(join(root, 'cache'))).toEqual(['template']);
  });

  it('keeps a whole directory that is there already, without building', async () => {
    mkdirSync(join(root, 'cache'));
    makeData(target);
    const build = jest.fn(() => Promise.resolve());
    expect(await buildDataDirectory(target, build)).toBe(target);
    expect(build).not.toHaveBeenCalled();
  });

  it('leaves nothing behind when the build fails, and says why', async () => {
    const failing = (directory: string): Promise<void> => {
      makeData(directory);
      return Promise.reject(new Error('initdb failed'));
    };
    await expect(buildDataDirectory(target, failing)).rejects.toThrow('initdb failed');
    expect(readdirSync(join(root, 'cache'))).toEqual([]);
  });

  it("takes another process's directory when it finished first", async () => {
    const raced = (directory: string): Promise<void> => {
      makeData(target);
      makeData(directory);
      return Promise.resolve();
    };
    expect(await buildDataDirectory(target, raced)).toBe(target);
    expect(readdirSync(join(root, 'cache'))).toEqual(['template']);
  });
});
