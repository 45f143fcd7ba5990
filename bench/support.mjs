// Shared by the benchmarks.
import pg from 'pg';

/**
 * Runs `fn` with the URL of a fresh PostgreSQL database created under BENCH_DATABASE_URL and
 * dropped afterwards, or with undefined (the embedded database) when that variable is unset.
 */
export async function withDatabase(fn) {
  const adminUrl = process.env.BENCH_DATABASE_URL;
  if (!adminUrl) return fn(undefined);
  const name = `ews_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    return await fn(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}
