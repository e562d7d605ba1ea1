import { Client } from 'pg';
import { EmbeddedPostgres } from 'src/database/embedded-postgres';

jest.setTimeout(120_000);

/**
 * Several connections on the one PGlite session, as the service's pool and admin CLI commands
 * beside it use it: every exchange and every transaction keeps the session to itself.
 */
describe('the embedded database shared by several connections', () => {
  let db: EmbeddedPostgres;
  const clients: Client[] = [];
  const connect = async (): Promise<Client> => {
    const client = new Client({ connectionString: db.url });
    clients.push(client);
    await client.connect();
    return client;
  };

  beforeAll(async () => {
    db = await EmbeddedPostgres.start(null);
    const setup = await connect();
    await setup.query('CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)');
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.end().catch(() => undefined)));
  });
  afterAll(() => db.stop());

  it('answers every connection its own statement, also one larger than a network read', async () => {
    const [a, b, c] = await Promise.all([connect(), connect(), connect()]);
    // A 300 kB parameter arrives in several reads; the other connections' statements come in
    // between, and must not run between its Parse and its Bind.
    const big = (i: number): string => `a${i}:${'x'.repeat(300_000)}`;
    const run = async (
      client: Client,
      tag: string,
      body: (i: number) => string,
    ): Promise<number> => {
      let wrong = 0;
      for (let i = 0; i < 40; i += 1) {
        const { rows } = await client.query<{ body: string; tag: string }>(
          `WITH added AS (INSERT INTO notes (body) VALUES ($1) RETURNING body) SELECT body, '${tag}' AS tag FROM added`,
          [body(i)],
        );
        if (rows[0]?.body !== body(i) || rows[0]?.tag !== tag) wrong += 1;
      }
      return wrong;
    };
    expect(
      await Promise.all([
        run(a, 'a', big),
        run(b, 'b', (i) => `b${i}`),
        run(c, 'c', (i) => `c${i}`),
      ]),
    ).toEqual([0, 0, 0]);
  });

  it("keeps a transaction's statements together and out of the others' sight until COMMIT", async () => {
    const [writer, reader] = await Promise.all([connect(), connect()]);
    await writer.query('BEGIN');
    await writer.query('INSERT INTO notes (body) VALUES ($1)', ['pending']);
    // The reader waits for the session: it sees the row once the writer has committed.
    const seen = reader.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM notes WHERE body = 'pending'",
    );
    await writer.query('INSERT INTO notes (body) VALUES ($1)', ['pending']);
    await writer.query('COMMIT');
    expect((await seen).rows).toEqual([{ n: 2 }]);
  });

  it('rolls back what a connection that closes mid-transaction left, and goes on', async () => {
    const [quitter, other] = await Promise.all([connect(), connect()]);
    await quitter.query('BEGIN');
    await quitter.query('INSERT INTO notes (body) VALUES ($1)', ['abandoned']);
    const after = other.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM notes WHERE body = 'abandoned'",
    );
    await quitter.end();
    expect((await after).rows).toEqual([{ n: 0 }]);
  });

  it("refuses a connection past its limit with PostgreSQL's own error", async () => {
    await Promise.all([connect(), connect(), connect(), connect()]);
    await expect(connect()).rejects.toThrow(/too many clients already/);
  });

  it('stops while a connection is in the middle of a transaction, and nothing is left running', async () => {
    const own = await EmbeddedPostgres.start(null);
    const client = new Client({ connectionString: own.url });
    client.on('error', () => undefined);
    await client.connect();
    await client.query('BEGIN');
    const ended = new Promise((resolve) => client.once('end', resolve));
    const rejections: unknown[] = [];
    const record = (reason: unknown): void => void rejections.push(reason);
    process.on('unhandledRejection', record);
    try {
      await own.stop();
      await ended;
      // The server's connection handlers finish closing on the next turns of the event loop.
      for (let turn = 0; turn < 3; turn += 1) await new Promise(setImmediate);
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});
