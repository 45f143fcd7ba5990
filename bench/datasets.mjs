// Datasets at scale, through the real HTTP API:
//  1. upload of a 100,000-row CSV to a committed version, beside a plain PostgreSQL COPY of the
//     same rows into a bare table in the same run (the bar: at most 3x the COPY);
//  2. filtered queries over a 1,000,000-row version (eq through the GIN index, a range scan,
//     a dimension-free page) with the indexes of the datasets migration.
//
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/datasets.mjs
//   npm run build && node bench/datasets.mjs            # embedded PGlite (upload only, 100k rows)
//
// Creates its own database (or data directory) and removes it afterwards.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { withBenchApp, withDatabase } from './support.mjs';
import { from as copyFrom } from 'pg-copy-streams';
import { DataSource } from 'typeorm';

const uploadRows = Number(process.env.BENCH_UPLOAD_ROWS ?? 100_000);
const queryRows = Number(process.env.BENCH_QUERY_ROWS ?? 1_000_000);
const LANGS = ['en', 'fr', 'de', 'es', 'it'];

function csvOf(n, offset = 0) {
  const lines = ['id,question,answer,language,difficulty,score'];
  for (let i = offset; i < offset + n; i++) {
    lines.push(`${i},"What is question number ${i}, please?","Answer ${i} is ${(i * 7919) % 1000}",${LANGS[i % 5]},${i % 10},${((i * 31) % 1000) / 10}`);
  }
  return `${lines.join('\n')}\n`;
}


/** The same rows as JSON documents COPYed into a bare jsonb table: the floor any upload path is compared with. */
async function plainCopy(databaseUrl, csv) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('CREATE TABLE bench_copy (id bigint, data jsonb)');
  const [header, ...lines] = csv.trim().split('\n');
  const cols = header.split(',');
  const started = performance.now();
  const copy = client.query(copyFrom('COPY bench_copy (id, data) FROM STDIN (FORMAT csv)'));
  async function* rows() {
    for (let i = 0; i < lines.length; i += 5000) {
      yield lines
        .slice(i, i + 5000)
        .map((line) => {
          const m = line.match(/^(\d+),"([^"]*)","([^"]*)",(\w+),(\d+),([\d.]+)$/);
          const doc = { [cols[0]]: Number(m[1]), [cols[1]]: m[2], [cols[2]]: m[3], [cols[3]]: m[4], [cols[4]]: Number(m[5]), [cols[5]]: Number(m[6]) };
          return `${m[1]},"${JSON.stringify(doc).replace(/"/g, '""')}"\n`;
        })
        .join('');
    }
  }
  await pipeline(Readable.from(rows()), copy);
  const ms = performance.now() - started;
  await client.query('DROP TABLE bench_copy');
  await client.end();
  return ms;
}

/** Uploads with curl, a client in its own process, so the server's event loop does only server work. */
async function curlUpload(base, token, workspaceId, file, name) {
  const { stdout } = await promisify(execFile)('curl', ['-sS', '-f', '-H', `Authorization: Bearer ${token}`, '-F', `file=@${file}`, ...(name ? ['-F', `name=${name}`] : []), `${base}/datasets/upload?workspace_id=${workspaceId}`], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout);
}

/** Waits for the merge of the row index that an upload of the dataset scheduled, through the app's own connection; answers its duration. */
async function mergeSeconds(app, datasetId) {
  const db = app.get(DataSource);
  for (;;) {
    const [job] = await db.query(`SELECT status, extract(epoch FROM (finished_at - started_at))::float8 AS s, error FROM jobs WHERE type = 'datasets.merge-row-index' AND target_id = $1`, [datasetId]);
    if (job?.status === 'succeeded') return Number(job.s);
    if (job?.status === 'failed') throw new Error(`the index merge failed: ${JSON.stringify(job.error)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

await withDatabase((databaseUrl) =>
  withBenchApp(databaseUrl, { UPLOAD_MAX_ROWS: String(Math.max(uploadRows, queryRows)) }, async ({ app, base, http, token, auth, ws, dataDir, mode }) => {
    const csv = csvOf(uploadRows);
    const file = join(dataDir, 'upload.csv');
    writeFileSync(file, csv);
    const copyMs = databaseUrl ? await plainCopy(databaseUrl, csv) : undefined;
    const t0 = performance.now();
    const up = { body: await curlUpload(base, token, ws, file) };
    const uploadMs = performance.now() - t0;
    console.log(`[${mode}] upload of ${uploadRows} CSV rows (${(csv.length / 1e6).toFixed(1)} MB) to a committed version: ${(uploadMs / 1000).toFixed(2)} s (${Math.round(uploadRows / (uploadMs / 1000))} rows/s)` +
      (copyMs ? `; plain COPY of the same rows: ${(copyMs / 1000).toFixed(2)} s; ratio ${(uploadMs / copyMs).toFixed(2)}x` : ''));
    console.log(`  version ${up.body.latest_version.number}: ${up.body.latest_version.row_count} rows, rss ${Math.round(process.memoryUsage().rss / 1e6)} MB`);
    console.log(`  background merge of the row index after it: ${(await mergeSeconds(app, up.body.id)).toFixed(1)} s`);

    if (!databaseUrl || !queryRows) return;
    // 1,000,000 rows: ten uploads of 100,000 into one dataset would replace; one file holds them all.
    const bigFile = join(dataDir, 'big.csv');
    writeFileSync(bigFile, csvOf(queryRows));
    const tb = performance.now();
    const big = { body: await curlUpload(base, token, ws, bigFile, 'big') };
    console.log(`[${mode}] upload of ${queryRows} rows: ${((performance.now() - tb) / 1000).toFixed(1)} s`);
    const id = big.body.id;
    console.log(`  background merge of the row index after it: ${(await mergeSeconds(app, id)).toFixed(1)} s`);
    const queries = {
      'eq on a column (GIN containment), first page': { filter: { field: 'id', op: 'eq', value: 777_777 }, limit: 50 },
      'in on a column, with total': { filter: { field: 'language', op: 'in', value: ['fr', 'de'] }, limit: 50 },
      'eq, without total': { filter: { field: 'language', op: 'eq', value: 'fr' }, limit: 50, include_total: false },
      'range (gte), without total': { filter: { field: 'score', op: 'gte', value: 99.5 }, limit: 50, include_total: false },
      'and of eq + range, with total': { filter: { and: [{ field: 'language', op: 'eq', value: 'de' }, { field: 'difficulty', op: 'gte', value: 7 }] }, limit: 50 },
      'no filter, page 1000': { limit: 50, offset: 50_000, include_total: false },
    };
    for (const [name, body] of Object.entries(queries)) {
      const times = [];
      let total;
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        const res = await http.post(`/datasets/${id}/query`).set(auth).send(body).expect(200);
        times.push(performance.now() - t);
        total = res.body.total ?? `${res.body.items.length} on the page`;
      }
      console.log(`  query ${name}: median ${median(times).toFixed(0)} ms (matches: ${total})`);
    }
  }),
);
