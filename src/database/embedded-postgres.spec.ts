import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { EmbeddedPostgres } from 'src/database/embedded-postgres';
import { embeddedTemplate, seedDataDirectory } from 'src/database/embedded-template';

jest.setTimeout(60_000);

async function query(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Record<string, unknown>>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('the embedded database', () => {
  let workDir: string;
  beforeEach(() => (workDir = mkdtempSync(join(tmpdir(), 'bms-embedded-spec-'))));
  afterEach(() => rmSync(workDir, { recursive: true, force: true }));

  it('prepares one initialised template per PGlite version and reuses it', async () => {
    const template = await embeddedTemplate();
    expect(template).toMatch(/node_modules[/\\]\.cache[/\\]bot-management-service[/\\]pglite-\d/);
    expect(existsSync(join(template, 'PG_VERSION'))).toBe(true);
    expect(await embeddedTemplate()).toBe(template);
  });

  it('seeds a missing or empty directory from the template and leaves a used one alone', async () => {
    const fresh = join(workDir, 'fresh');
    await seedDataDirectory(fresh);
    expect(existsSync(join(fresh, 'PG_VERSION'))).toBe(true);
    expect(existsSync(`${fresh}.partial`)).toBe(false);

    const empty = join(workDir, 'empty');
    mkdirSync(empty);
    await seedDataDirectory(empty);
    expect(existsSync(join(empty, 'PG_VERSION'))).toBe(true);

    const used = join(workDir, 'used');
    mkdirSync(used);
    writeFileSync(join(used, 'keep.txt'), 'mine');
    await seedDataDirectory(used);
    expect(readdirSync(used)).toEqual(['keep.txt']);
  });

  it('keeps its data across a restart, with the settings sized for one session', async () => {
    const directory = join(workDir, 'pglite');
    const first = await EmbeddedPostgres.start(directory);
    try {
      await query(first.url, 'CREATE TABLE kept (id int); INSERT INTO kept VALUES (7)');
      expect(await query(first.url, 'SHOW shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
    } finally {
      await first.stop();
    }
    expect(existsSync(join(workDir, 'pglite.pid'))).toBe(false);

    const second = await EmbeddedPostgres.start(directory);
    try {
      expect(await query(second.url, 'SELECT id FROM kept')).toEqual([{ id: 7 }]);
    } finally {
      await second.stop();
    }
  });

  it('refuses a directory another live process holds, and names that process', async () => {
    const directory = join(workDir, 'pglite');
    expect(EmbeddedPostgres.holder(directory)).toBeNull();
    const holder = await EmbeddedPostgres.start(directory);
    try {
      // Our own pid counts as free (a restart in one process); a live other process does not.
      expect(EmbeddedPostgres.holder(directory)).toBeNull();
      writeFileSync(join(workDir, 'pglite.pid'), String(process.ppid));
      expect(EmbeddedPostgres.holder(directory)).toBe(process.ppid);
      await expect(EmbeddedPostgres.start(directory)).rejects.toThrow(
        `The embedded database in ${directory} is in use by process ${process.ppid}`,
      );
    } finally {
      await holder.stop();
    }
  });

  it('runs a throwaway database for memory:// and removes it when stopped', async () => {
    const db = await EmbeddedPostgres.start(null);
    const scratch = db.scratchDirectory as string;
    expect(scratch.startsWith(join(tmpdir(), 'bms-pglite-'))).toBe(true);
    expect(readdirSync(scratch)).toContain('pglite');
    try {
      expect(await query(db.url, 'SELECT 41 + 1 AS answer')).toEqual([{ answer: 42 }]);
    } finally {
      await db.stop();
    }
    expect(existsSync(scratch)).toBe(false);
  });
});
