import { Client } from 'pg';

/** The PostgreSQL server the benchmarks create their databases on. */
export const BENCH_ADMIN_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  url: string;
  drop(): Promise<void>;
}

/** Databases created by this process: part of each name, so two made in one millisecond differ. */
let created = 0;

/** A new empty database named `<prefix>_<time>_<n>` on BENCH_ADMIN_URL; null when it is unreachable. */
export async function freshPostgresDatabase(prefix: string): Promise<BenchDatabase | null> {
  const admin = new Client({ connectionString: BENCH_ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch {
    return null;
  }
  const name = `${prefix}_${Date.now()}_${++created}`;
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
