// Shared by the benchmarks.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

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

/**
 * The real application (as `npm start` builds it, from dist/) on `databaseUrl` (or embedded) with
 * a fresh DATA_DIR, listening on a free port, with a logged-in system admin and a workspace;
 * closed and its data directory removed after `fn`.
 */
export async function withBenchApp(databaseUrl, env, fn) {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { default: supertest } = await import('supertest');
  const { createApp } = await import('../dist/src/bootstrap.js');
  const { AppConfig } = await import('../dist/src/config/app-config.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-bench-'));
  const config = AppConfig.fromEnvironment({
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    DATA_DIR: dataDir,
    ADMIN_EMAIL: 'bench@example.com',
    ADMIN_PASSWORD: 'bench-password-1',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const { app } = await createApp(config);
  await app.listen(0, '127.0.0.1');
  try {
    const base = await app.getUrl();
    const http = supertest(app.getHttpServer());
    const token = (await http.post('/auth/token').send({ email: 'bench@example.com', password: 'bench-password-1' }).expect(200)).body.access_token;
    const auth = { Authorization: `Bearer ${token}` };
    const ws = (await http.post('/workspaces').set(auth).send({ name: 'bench' }).expect(201)).body.id;
    return await fn({ app, base, http, token, auth, ws, dataDir, mode: databaseUrl ? 'PostgreSQL' : 'embedded PGlite' });
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A dataset's rows COPYed into a bare jsonb table: the floor a landing is compared with (rows, milliseconds). */
export async function plainCopy(databaseUrl, datasetId) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows } = await client.query('SELECT data::text AS data FROM dataset_rows WHERE dataset_id = $1', [datasetId]);
  await client.query('CREATE TABLE bench_copy (id bigint, data jsonb)');
  const started = performance.now();
  const copy = client.query(copyFrom('COPY bench_copy (id, data) FROM STDIN (FORMAT csv)'));
  async function* lines() {
    for (let i = 0; i < rows.length; i += 5000) yield rows.slice(i, i + 5000).map((r, k) => `${i + k},"${r.data.replace(/"/g, '""')}"\n`).join('');
  }
  await pipeline(Readable.from(lines()), copy);
  const ms = performance.now() - started;
  await client.query('DROP TABLE bench_copy');
  await client.end();
  return { ms, rows: rows.length };
}
