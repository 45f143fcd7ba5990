// Throughput and latency of the HTTP pipeline with and without the per-request token check
// (JWT signature + one indexed session query), on the embedded database and on PostgreSQL.
//
//   npm run build && node bench/http-auth.mjs                 # embedded PGlite
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/http-auth.mjs
//
// Creates its own database (PostgreSQL) or data directory (embedded) and removes it afterwards.
import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withDatabase } from './support.mjs';
import { createApp } from '../dist/src/bootstrap.js';
import { AppConfig } from '../dist/src/config/app-config.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);


function run(url, headers) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, duration: seconds, headers }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

await withDatabase(async (databaseUrl) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-bench-'));
  const config = AppConfig.fromEnvironment({
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    DATA_DIR: dataDir,
    ADMIN_EMAIL: 'bench@example.com',
    ADMIN_PASSWORD: 'bench-password-1',
    LOG_LEVEL: 'silent',
    RUN_WORKERS: 'false',
  });
  const { app } = await createApp(config);
  await app.listen(0, '127.0.0.1');
  const base = await app.getUrl();
  try {
    const login = await fetch(`${base}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password-1' }),
    });
    const { access_token } = await login.json();
    const rows = [];
    for (const [name, path, headers] of [
      ['GET /live (no auth, no database)', '/live', {}],
      ['GET /auth/me (token check + user + memberships)', '/auth/me', { authorization: `Bearer ${access_token}` }],
    ]) {
      const r = await run(`${base}${path}`, headers);
      rows.push({ name, rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx });
    }
    const db = databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
    console.log(`\n${db}, ${connections} connections, ${seconds} s each, node ${process.version}`);
    console.log('| request | req/s | p50 ms | p99 ms | errors |\n|---|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.name} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} |`);
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
