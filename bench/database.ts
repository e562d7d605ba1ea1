import { Client } from 'pg';

/** The PostgreSQL server the benchmarks create their databases on. */
export const BENCH_ADMIN_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A new empty database named `<prefix>_<time>` on BENCH_ADMIN_URL; null when it is unreachable. */
export async function freshPostgresDatabase(prefix: string): Promise<BenchDatabase | null> {
  const admin = new Client({ connectionString: BENCH_ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch {
    return null;
  }
  const name = `${prefix}_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(BENCH_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new Client({ connectionString: BENCH_ADMIN_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
