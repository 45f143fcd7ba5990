// Datasets at scale, through the real HTTP API:
//  1. upload of a 100,000-row CSV to a committed version (curl, a client in its own process),
//     beside a plain COPY of the same rows as JSON into a bare table (bench/lib/plain-copy.mjs, a
//     process of its own) in the same run: three rounds, alternating which goes first, with the
//     service's peak RSS while it uploads (the bar: at most 2x the COPY; embedded, under 400 MB);
//  2. (PostgreSQL) filtered queries over a 1,000,000-row version (eq through the GIN index, a
//     range scan, a dimension-free page) with the indexes of the datasets migration.
//
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/datasets.mjs
//   npm run build && node bench/datasets.mjs            # embedded PGlite (twin: a fresh PGlite)
//
// BENCH_UPLOAD_ROWS (100000), BENCH_ROUNDS (3), BENCH_QUERY_ROWS (1000000; 0 skips the queries);
// EMBEDDED_SHARED_BUFFERS (the service's, 32MB) to compare the embedded database's buffer cache sizes;
// UPLOAD_THREAD_MIN_BYTES (the service's, 1 MiB) to compare parsing on a worker thread with parsing on node's own.
// Creates its own database (or data directory) and removes it afterwards.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { median, spread } from './lib/processes.mjs';
import { csvOf, curlUpload } from './lib/uploads.mjs';
import { asNpmStartRuns, plainCopyProcess, withBenchApp, withDatabase, withPeakRss } from './support.mjs';

asNpmStartRuns();

const uploadRows = Number(process.env.BENCH_UPLOAD_ROWS ?? 100_000);
const queryRows = Number(process.env.BENCH_QUERY_ROWS ?? 1_000_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
/** Waits for the merge of the row index that an upload of the dataset scheduled, through the app's own connection; answers its duration. */
async function mergeSeconds(app, datasetId) {
  const db = app.get(DataSource);
  for (;;) {
    const [job] = await db.query(
      `SELECT status, extract(epoch FROM (finished_at - started_at))::float8 AS s, error FROM jobs WHERE type = 'datasets.merge-row-index' AND target_id = $1`,
      [datasetId],
    );
    if (job?.status === 'succeeded') return Number(job.s);
    if (job?.status === 'failed') throw new Error(`the index merge failed: ${JSON.stringify(job.error)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

await withDatabase((databaseUrl) =>
  withBenchApp(
    databaseUrl,
    {
      UPLOAD_MAX_ROWS: String(Math.max(uploadRows, queryRows)),
      // A file this large or larger is parsed on a worker thread; 1000000000 parses every upload on node's own thread, to compare.
      ...(process.env.UPLOAD_THREAD_MIN_BYTES ? { UPLOAD_THREAD_MIN_BYTES: process.env.UPLOAD_THREAD_MIN_BYTES } : {}),
    },
    async ({ app, base, http, token, auth, ws, dataDir, mode }) => {
      const csv = csvOf(uploadRows);
      const file = join(dataDir, 'upload.csv');
      writeFileSync(file, csv);
      const uploads = [];
      const copies = [];
      const ratios = [];
      const peaks = [];
      for (let round = 0; round < rounds; round++) {
        // Alternating which goes first, so neither always runs on a cooler machine.
        const copyFirst = round % 2 === 1;
        let copyMs;
        if (copyFirst) copyMs = (await plainCopyProcess(databaseUrl ?? 'pglite', file, 'csv')).ms;
        const t0 = performance.now();
        const {
          result: up,
          peak,
          before,
        } = await withPeakRss(() => curlUpload(base, token, ws, file, `upload ${round + 1}`));
        const uploadMs = performance.now() - t0;
        if (!copyFirst) copyMs = (await plainCopyProcess(databaseUrl ?? 'pglite', file, 'csv')).ms;
        if (up.latest_version.row_count !== uploadRows)
          throw new Error(`the upload holds ${up.latest_version.row_count} rows`);
        uploads.push(uploadMs / 1000);
        copies.push(copyMs / 1000);
        ratios.push(uploadMs / copyMs);
        peaks.push(peak / 1e6);
        console.log(
          `[${mode}] round ${round + 1}: upload of ${uploadRows} CSV rows (${(csv.length / 1e6).toFixed(1)} MB) to a committed version ${(uploadMs / 1000).toFixed(2)} s` +
            ` (${Math.round(uploadRows / (uploadMs / 1000))} rows/s), plain COPY ${(copyMs / 1000).toFixed(2)} s, ratio ${(uploadMs / copyMs).toFixed(2)}x;` +
            ` peak rss ${Math.round(peak / 1e6)} MB (${Math.round(before / 1e6)} MB before); index merge after it ${(await mergeSeconds(app, up.id)).toFixed(1)} s`,
        );
      }
      console.log(
        `[${mode}] ${rounds} rounds, min / median / max: upload ${spread(uploads, 2)} s; plain COPY ${spread(copies, 2)} s; ratio ${spread(ratios, 2)}x; peak rss ${spread(peaks)} MB`,
      );

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
        'eq on a column (GIN containment), first page': {
          filter: { field: 'id', op: 'eq', value: 777_777 },
          limit: 50,
        },
        'in on a column, with total': { filter: { field: 'language', op: 'in', value: ['fr', 'de'] }, limit: 50 },
        'eq, without total': { filter: { field: 'language', op: 'eq', value: 'fr' }, limit: 50, include_total: false },
        'range (gte), without total': {
          filter: { field: 'score', op: 'gte', value: 99.5 },
          limit: 50,
          include_total: false,
        },
        'and of eq + range, with total': {
          filter: {
            and: [
              { field: 'language', op: 'eq', value: 'de' },
              { field: 'difficulty', op: 'gte', value: 7 },
            ],
          },
          limit: 50,
        },
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
    },
  ),
);
