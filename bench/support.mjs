// Shared by the benchmarks.
import { spawnSync } from 'node:child_process';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import { serviceEnv, serviceNodeFlags } from './lib/processes.mjs';

/**
 * A benchmark that hosts the service in its own process runs as `npm start` runs the service: with
 * its node flags and its environment (docs/operations.md#node-flags, #memory). Started without one
 * of them, it runs itself again with them and exits as that run does; a variable set by hand is kept.
 */
export function asNpmStartRuns() {
  const flags = serviceNodeFlags.filter((flag) => !process.execArgv.includes(flag));
  const env = Object.entries(serviceEnv).filter(([name]) => process.env[name] === undefined);
  if (!flags.length && !env.length) return;
  const again = spawnSync(process.execPath, [...flags, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, ...Object.fromEntries(env) },
  });
  process.exit(again.status ?? 1);
}

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
  const { createApp } = await import('#src/bootstrap.js');
  const { AppConfig } = await import('#libs/config/app-config.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-bench-'));
  if (!databaseUrl) await initEmbedded(join(dataDir, 'pgdata'));
  const config = AppConfig.fromEnvironment({
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    DATA_DIR: dataDir,
    ADMIN_EMAIL: 'bench@example.com',
    ADMIN_PASSWORD: 'bench-password-1',
    LOG_LEVEL: 'silent',
    // The embedded database's buffer cache, to compare sizes (docs/configuration.md).
    ...(process.env.EMBEDDED_SHARED_BUFFERS ? { EMBEDDED_SHARED_BUFFERS: process.env.EMBEDDED_SHARED_BUFFERS } : {}),
    ...env,
  });
  const { app } = await createApp(config);
  await app.listen(0, '127.0.0.1');
  try {
    const base = await app.getUrl();
    const http = supertest(app.getHttpServer());
    const token = (
      await http.post('/auth/token').send({ email: 'bench@example.com', password: 'bench-password-1' }).expect(200)
    ).body.access_token;
    const auth = { Authorization: `Bearer ${token}` };
    const ws = (await http.post('/workspaces').set(auth).send({ name: 'bench' }).expect(201)).body.id;
    return await fn({
      app,
      base,
      http,
      token,
      auth,
      ws,
      dataDir,
      mode: databaseUrl ? 'PostgreSQL' : 'embedded PGlite',
    });
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Creates the embedded database's directory in a process of its own, so the service opens an
 * existing one as it does on every start but its first: PGlite's initdb leaves about 200 MB
 * of resident memory behind in the process that ran it, which would blur the service's own.
 */
async function initEmbedded(pgDir) {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const { fileURLToPath } = await import('node:url');
  const script = `import { PGlite } from '@electric-sql/pglite'; import { pgcrypto } from '@electric-sql/pglite/contrib/pgcrypto';
    const db = await PGlite.create(${JSON.stringify(pgDir)}, { extensions: { pgcrypto } }); await db.close();`;
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
  });
}

/**
 * The plain COPY twin (bench/lib/plain-copy.mjs) in a process of its own on `target` (a
 * PostgreSQL URL, or `pglite` for a fresh embedded database) over `file` (`csv` or `jsonl`), or
 * over the rows of the dataset whose id `file` is (`dataset`, PostgreSQL): answers `{ ms, rows }`.
 */
export async function plainCopyProcess(target, file, kind) {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const { fileURLToPath } = await import('node:url');
  const script = fileURLToPath(new URL('./lib/plain-copy.mjs', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [script, target, file, kind], {
    maxBuffer: 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

/**
 * A dataset's rows (as stored, jsonb text) COPYed into a bare jsonb table by the twin process:
 * the floor a landing is compared with (rows, milliseconds). `source` is a PostgreSQL URL (the
 * twin reads the rows itself), or the app's DataSource (embedded: the rows are written to the
 * twin's file a page at a time, and the twin COPYs them into a fresh PGlite). The measured
 * service's process never holds them all: reading 100,000 spans at once here left about 250 MB of
 * V8 heap and 120 MB of resident memory on the service's account before its next round.
 */
export async function plainCopy(source, datasetId) {
  if (typeof source === 'string') return plainCopyProcess(source, datasetId, 'dataset');
  const { createWriteStream, mkdtempSync, rmSync } = await import('node:fs');
  const { once } = await import('node:events');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const PAGE = 5000;
  const sql =
    'SELECT ordinal, data::text AS data FROM dataset_rows WHERE dataset_id = $1 AND removed_in IS NULL AND ordinal > $2 ORDER BY ordinal LIMIT $3';
  const dir = mkdtempSync(join(tmpdir(), 'ews-bench-copy-'));
  try {
    const file = join(dir, 'rows.jsonl');
    const out = createWriteStream(file);
    for (let after = -1; ;) {
      const rows = await source.query(sql, [datasetId, after, PAGE]);
      if (!rows.length) break;
      if (!out.write(`${rows.map((r) => r.data).join('\n')}\n`)) await once(out, 'drain');
      after = rows.at(-1).ordinal;
    }
    out.end();
    await once(out, 'finish');
    return await plainCopyProcess('pglite', file, 'jsonl');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The process's memory in MB, split as node reports it (`process.memoryUsage()`): resident set,
 * V8 heap used and reserved, external memory and the array buffers within it. With `collect`,
 * after a full garbage collection and a second's pause for V8 to give the freed pages back (so
 * what is left is what is held, not garbage not yet swept).
 */
export async function memorySplit(collect = false) {
  if (collect) {
    setFlagsFromString('--expose-gc');
    runInNewContext('gc')();
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const m = process.memoryUsage();
  const mb = (bytes) => Math.round(bytes / 1e6);
  return {
    rss: mb(m.rss),
    heapUsed: mb(m.heapUsed),
    heapTotal: mb(m.heapTotal),
    external: mb(m.external),
    arrayBuffers: mb(m.arrayBuffers),
  };
}

/** A memorySplit as one line: `rss 307 MB (heap 115 used / 166 reserved, external 23, array buffers 3)`. */
export const formatSplit = (m) =>
  `rss ${m.rss} MB (heap ${m.heapUsed} used / ${m.heapTotal} reserved, external ${m.external}, array buffers ${m.arrayBuffers})`;

/** Samples the process's RSS every 25 ms while `work` runs: `{ result, peak, before }` (bytes). */
export async function withPeakRss(work) {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 25);
  try {
    const result = await work();
    return { result, peak: Math.max(peak, process.memoryUsage().rss), before };
  } finally {
    clearInterval(sampler);
  }
}
