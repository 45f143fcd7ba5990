// Runs at scale, through the real HTTP API and the in-process queue:
//  1. ROWS rows (10,000 by default; 100,000 and 1,000,000 for the memory bound) through a local
//     SUT that answers in 50 ms (a process of its own, bench/lib/sut.mjs), at concurrency 32: wall time from POST /runs to the run's end, as
//     a ratio of the ideal ROWS x 50 ms / 32 (15.6 s for 10,000), with the process's RSS sampled
//     every 100 ms: before the run (after a GC), and its lowest and highest sample during the run;
//  2. scoring 100,000 uploaded outputs of an offline run with deterministic metrics
//     (exact_match, contains, token_f1, levenshtein, rouge_l, length): rows per second from
//     the upload's end to `succeeded` (by default only when ROWS is not set).
//
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/runs.mjs
//   npm run build && node bench/runs.mjs                     # embedded PGlite
//   npm run build && ROWS=1000000 node bench/runs.mjs        # a million rows (about 26 min at the defaults)
//
// Environment: ROWS (or BENCH_RUN_ROWS; 10000), BENCH_SUT_MS (50), BENCH_CONCURRENCY (32),
// BENCH_SCORE_ROWS (100000, or 0 when ROWS is set), RUN_PAGE_SIZE (the service's, 500).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import supertest from 'supertest';
import { createApp } from '../dist/src/bootstrap.js';
import { AppConfig } from '../dist/libs/config/app-config.js';
import { asNpmStartRuns, withDatabase } from './support.mjs';
import { startSutProcess } from './lib/sut.mjs';

asNpmStartRuns();

const runRows = Number(process.env.ROWS ?? process.env.BENCH_RUN_ROWS ?? 10_000);
const sutMs = Number(process.env.BENCH_SUT_MS ?? 50);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const scoreRows = Number(process.env.BENCH_SCORE_ROWS ?? (process.env.ROWS ? 0 : 100_000));

// A full collection before the baseline, so the upload's garbage is not counted as the run's.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
const mb = (bytes) => Math.round(bytes / 1e6);

/** Polls the run until it ends: less often for large runs, as a client would (each GET counts the run's items). */
async function settle(http, auth, id) {
  const every = Math.min(5000, Math.max(250, runRows / 100));
  for (;;) {
    const run = (await http.get(`/runs/${id}`).set(auth).expect(200)).body;
    if (['succeeded', 'failed', 'cancelled'].includes(run.state)) return run;
    await new Promise((resolve) => setTimeout(resolve, every));
  }
}

/**
 * The process's RSS while `work` runs, sampled every 100 ms: the lowest and highest sample. The
 * lowest shows what the process gave back of what it held before (a large upload's memory is
 * returned during the run), so the highest is read against it too.
 */
async function peakRss(work) {
  let low = Infinity;
  let peak = 0;
  const sample = () => {
    const rss = process.memoryUsage.rss();
    low = Math.min(low, rss);
    peak = Math.max(peak, rss);
  };
  const timer = setInterval(sample, 100);
  try {
    const result = await work();
    sample();
    return { result, peak, low };
  } finally {
    clearInterval(timer);
  }
}

/** When the run's last progress event and its end were recorded: the time between is the summary's and the finish's. */
async function lastProgressAt(http, auth, id) {
  let after = 0;
  let last = null;
  for (;;) {
    const events = (await http.get(`/runs/${id}/events`).query({ after, limit: 1000 }).set(auth).expect(200)).body;
    for (const e of events) if (e.type === 'progress') last = Date.parse(e.at);
    if (events.length < 1000) return last;
    after = events.at(-1).seq;
  }
}

/** Uploads rows as JSON Lines (a million rows stay a single buffer of tens of MB). */
async function uploadRows(http, auth, ws, count, row, name) {
  const lines = [];
  for (let i = 0; i < count; i++) lines.push(JSON.stringify(row(i)));
  const res = await http
    .post('/datasets/upload')
    .query({ workspace_id: ws })
    .set(auth)
    .field('name', name)
    .attach('file', Buffer.from(lines.join('\n')), `${name}.jsonl`)
    .expect(201);
  return res.body;
}

await withDatabase(async (databaseUrl) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-bench-runs-'));
  const config = AppConfig.fromEnvironment({
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    DATA_DIR: dataDir,
    ADMIN_EMAIL: 'bench@example.com',
    ADMIN_PASSWORD: 'bench-password-1',
    LOG_LEVEL: 'silent',
    UPLOAD_MAX_ROWS: String(Math.max(runRows, scoreRows)),
    UPLOAD_MAX_BYTES: String(1024 * 1024 * 1024),
    BODY_LIMIT: '64mb',
    ...(process.env.RUN_PAGE_SIZE ? { RUN_PAGE_SIZE: process.env.RUN_PAGE_SIZE } : {}),
  });
  const { app } = await createApp(config);
  await app.listen(0, '127.0.0.1');
  const http = supertest(app.getHttpServer());
  // The SUT is a process of its own, as a real one is another machine's: its CPU is not counted as the service's.
  const sut = await startSutProcess(sutMs);
  const mode = databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
  try {
    const login = await http
      .post('/auth/token')
      .send({ email: 'bench@example.com', password: 'bench-password-1' })
      .expect(200);
    const auth = { Authorization: `Bearer ${login.body.access_token}` };
    const ws = (await http.post('/workspaces').set(auth).send({ name: 'bench' }).expect(201)).body.id;
    const sutId = (await http.post('/suts').set(auth).send({ workspace_id: ws, name: 'bench-sut' }).expect(201)).body
      .id;
    const connection = (
      await http
        .post(`/suts/${sutId}/connections`)
        .set(auth)
        .send({ name: 'local', kind: 'http', http: { url: sut.url }, max_concurrency: concurrency, timeout_ms: 10_000 })
        .expect(201)
    ).body.id;

    if (runRows) {
      const dataset = await uploadRows(
        http,
        auth,
        ws,
        runRows,
        (i) => ({ input: `question ${i}`, expected_output: `answer to question ${i}` }),
        'run-bench',
      );
      gc();
      const before = process.memoryUsage.rss();
      const t0 = Date.now();
      const {
        result: done,
        peak,
        low,
      } = await peakRss(async () => {
        const run = (
          await http
            .post('/runs')
            .set(auth)
            .send({
              workspace_id: ws,
              dataset_id: dataset.id,
              sut_id: sutId,
              connection_id: connection,
              metrics: ['exact_match', 'token_f1'],
              concurrency,
            })
            .expect(202)
        ).body;
        return settle(http, auth, run.id);
      });
      const seconds = (Date.parse(done.finished_at) - t0) / 1000;
      const ideal = (runRows * sutMs) / 1000 / concurrency;
      const lastProgress = await lastProgressAt(http, auth, done.id);
      console.log(
        `[${mode}] run of ${runRows} rows, SUT ${sutMs} ms, concurrency ${concurrency}: ${seconds.toFixed(1)} s (ideal ${ideal.toFixed(1)} s, ratio ${(seconds / ideal).toFixed(2)}x); ${done.state}, ${done.progress.completed} answered, pass rate ${done.summary?.pass_rate}`,
      );
      console.log(
        `  rss before the run ${mb(before)} MB, during the run ${mb(low)}–${mb(peak)} MB (peak ${peak >= before ? '+' : ''}${mb(peak - before)} MB); summary and finish after the last answer: ${lastProgress ? ((Date.parse(done.finished_at) - lastProgress) / 1000).toFixed(1) : '?'} s`,
      );
    }

    if (scoreRows) {
      const dataset = await uploadRows(
        http,
        auth,
        ws,
        scoreRows,
        (i) => ({ input: `question ${i}`, expected_output: `the answer to question number ${i} is ${i * 7}` }),
        'score-bench',
      );
      const offline = (
        await http.post(`/suts/${sutId}/connections`).set(auth).send({ name: 'offline', kind: 'offline' }).expect(201)
      ).body.id;
      const run = (
        await http
          .post('/runs')
          .set(auth)
          .send({
            workspace_id: ws,
            dataset_id: dataset.id,
            sut_id: sutId,
            connection_id: offline,
            metrics: ['exact_match', 'contains', 'token_f1', 'levenshtein', 'rouge_l', 'length'],
          })
          .expect(202)
      ).body;
      const rowIds = [];
      for (let offset = 0; offset < scoreRows; offset += 1000) {
        const page = await http
          .post(`/runs/${run.id}/results/query`)
          .set(auth)
          .send({ limit: 1000, offset })
          .expect(200);
        for (const item of page.body.items) rowIds.push([item.row_id, item.row.expected_output]);
      }
      const tu = performance.now();
      for (let i = 0; i < rowIds.length; i += 10_000) {
        const chunk = rowIds.slice(i, i + 10_000).map(([row_id, expected], j) => ({
          row_id,
          output: (i + j) % 3 ? expected : `${expected} or so`,
          latency_ms: 40,
        }));
        await http
          .put(`/runs/${run.id}/upload`)
          .set(auth)
          .send({ results: chunk, complete: i + 10_000 >= rowIds.length })
          .expect(202);
      }
      const uploadSeconds = (performance.now() - tu) / 1000;
      const t0 = performance.now();
      const { result: done, peak } = await peakRss(() => settle(http, auth, run.id));
      const seconds = (performance.now() - t0) / 1000;
      console.log(
        `[${mode}] scoring ${scoreRows} uploaded outputs with 6 deterministic metrics: ${seconds.toFixed(1)} s (${Math.round(scoreRows / seconds)} rows/s; upload ${uploadSeconds.toFixed(1)} s); ${done.state}, pass rate ${done.summary?.pass_rate}; peak rss ${mb(peak)} MB`,
      );
    }
  } finally {
    await sut.close();
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
