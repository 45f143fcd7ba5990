// Runs at scale, through the real HTTP API and the service's in-process queue, the service as
// `npm start` runs it in a process of its own (bench/lib/service.mjs), every client outside it:
//  1. ROWS rows (10,000 by default; 100,000 and 1,000,000 for the memory bound), uploaded with
//     curl, through a local SUT that answers in 50 ms (a process of its own, bench/lib/sut.mjs) at
//     concurrency 32: wall time from POST /runs to the run's end, as a ratio of the ideal
//     ROWS x 50 ms / 32 (15.6 s for 10,000), and the service's RSS read from outside every 100 ms
//     (/proc/<pid>/status): at rest before the run (the service started again after the upload,
//     then BENCH_SETTLE_MS), and its lowest and highest sample during the run;
//  2. scoring 100,000 uploaded outputs of an offline run with deterministic metrics
//     (exact_match, contains, token_f1, levenshtein, rouge_l, length): rows per second from
//     the upload's end to `succeeded` (by default only when ROWS is not set).
//
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/runs.mjs
//   npm run build && node bench/runs.mjs                     # embedded PGlite
//   npm run build && ROWS=1000000 node bench/runs.mjs        # a million rows (about 30 min at the defaults)
//
// Environment: ROWS (or BENCH_RUN_ROWS; 10000), BENCH_SUT_MS (50), BENCH_CONCURRENCY (32),
// BENCH_SCORE_ROWS (100000, or 0 when ROWS is set), BENCH_SETTLE_MS (10000), RUN_PAGE_SIZE (the
// service's, 500). Creates its own database (or data directory) and removes it afterwards.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { rssDuring, rssMb } from './lib/processes.mjs';
import { api, EMAIL, httpSut, PASSWORD, productEnv, startProduct } from './lib/service.mjs';
import { startSutProcess } from './lib/sut.mjs';
import { curlUpload } from './lib/uploads.mjs';
import { withDatabase } from './support.mjs';

const runRows = Number(process.env.ROWS ?? process.env.BENCH_RUN_ROWS ?? 10_000);
const sutMs = Number(process.env.BENCH_SUT_MS ?? 50);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const scoreRows = Number(process.env.BENCH_SCORE_ROWS ?? (process.env.ROWS ? 0 : 100_000));
const settleMs = Number(process.env.BENCH_SETTLE_MS ?? 10_000);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls the run until it ends: less often for large runs, as a client would (each GET counts the run's items). */
async function settle(call, id) {
  const every = Math.min(5000, Math.max(250, runRows / 100));
  for (;;) {
    const run = await call('GET', `/runs/${id}`);
    if (['succeeded', 'failed', 'cancelled'].includes(run.state)) return run;
    await sleep(every);
  }
}

/** When the run's last progress event was recorded: from it to the run's end is the summary's and the finish's time. */
async function lastProgressAt(call, id) {
  let after = 0;
  let last = null;
  for (;;) {
    const events = await call('GET', `/runs/${id}/events?after=${after}&limit=1000`);
    for (const e of events) if (e.type === 'progress') last = Date.parse(e.at);
    if (events.length < 1000) return last;
    after = events.at(-1).seq;
  }
}

/** Writes `count` rows as a JSON Lines file in `dir` and uploads it with curl (a client in its own process); answers the dataset. */
async function uploadRows(base, token, ws, dir, count, row, name) {
  const file = join(dir, `${name}.jsonl`);
  const lines = [];
  for (let i = 0; i < count; i++) lines.push(JSON.stringify(row(i)));
  writeFileSync(file, lines.join('\n'));
  const dataset = await curlUpload(base, token, ws, file, name);
  rmSync(file);
  return dataset;
}

await withDatabase(async (databaseUrl) => {
  const dir = mkdtempSync(join(tmpdir(), 'ews-bench-runs-'));
  const mode = databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
  const env = productEnv(join(dir, 'data'), databaseUrl, {
    UPLOAD_MAX_ROWS: String(Math.max(runRows, scoreRows)),
    UPLOAD_MAX_BYTES: String(1024 * 1024 * 1024),
    BODY_LIMIT: '64mb',
    ...(process.env.RUN_PAGE_SIZE ? { RUN_PAGE_SIZE: process.env.RUN_PAGE_SIZE } : {}),
  });
  let service = await startProduct(env);
  let base = service.url;
  // The SUT is a process of its own, as a real one is another machine's: its CPU is not counted as the service's.
  const sut = await startSutProcess(sutMs);
  console.log(
    `${mode}: the service as npm start runs it (pid ${service.pid}); node ${process.version}, ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}`,
  );
  try {
    const { access_token: token } = await api(base, 'POST', '/auth/token', undefined, {
      email: EMAIL,
      password: PASSWORD,
    });
    // The API as this token's client, at the service's address of the moment (it is started again below).
    const call = (method, path, body) => api(base, method, path, token, body);
    const ws = (await call('POST', '/workspaces', { name: 'bench' })).id;
    const target = await httpSut(call, ws, sut.url, concurrency);
    const { sutId } = target;

    if (runRows) {
      const tu = performance.now();
      const dataset = await uploadRows(
        base,
        token,
        ws,
        dir,
        runRows,
        (i) => ({ input: `question ${i}`, expected_output: `answer to question ${i}` }),
        'run-bench',
      );
      const uploadSeconds = (performance.now() - tu) / 1000;
      // A second start, as users meet the service after the first (which created the data directory and ran the
      // migrations in the same process): the run starts from a service holding the dataset, not from the upload's
      // memory (bench/upload-rss.mjs measures that).
      await service.stop();
      service = await startProduct(env);
      base = service.url;
      await sleep(settleMs);
      const before = rssMb(service.pid);
      const t0 = Date.now();
      const { result: done, ...during } = await rssDuring(service.pid, 100, async () =>
        settle(call, (await call('POST', '/runs', target.runOf(dataset.id))).id),
      );
      const seconds = (Date.parse(done.finished_at) - t0) / 1000;
      const ideal = (runRows * sutMs) / 1000 / concurrency;
      const lastProgress = await lastProgressAt(call, done.id);
      const mb = Math.round;
      console.log(
        `[${mode}] run of ${runRows} rows, SUT ${sutMs} ms, concurrency ${concurrency}: ${seconds.toFixed(1)} s (ideal ${ideal.toFixed(1)} s, ratio ${(seconds / ideal).toFixed(2)}x); ${done.state}, ${done.progress.completed} answered, pass rate ${done.summary?.pass_rate}`,
      );
      console.log(
        `  the service's RSS: at rest before the run ${mb(before)} MB (the upload took ${uploadSeconds.toFixed(1)} s), during the run ${mb(during.low)}–${mb(during.peak)} MB (peak ${during.peak >= before ? '+' : ''}${mb(during.peak - before)} MB, ${during.peakAt.toFixed(0)} s into the run's ${during.seconds.toFixed(0)}); summary and finish after the last answer: ${lastProgress ? ((Date.parse(done.finished_at) - lastProgress) / 1000).toFixed(1) : '?'} s`,
      );
    }

    if (scoreRows) {
      const dataset = await uploadRows(
        base,
        token,
        ws,
        dir,
        scoreRows,
        (i) => ({ input: `question ${i}`, expected_output: `the answer to question number ${i} is ${i * 7}` }),
        'score-bench',
      );
      const offline = (await call('POST', `/suts/${sutId}/connections`, { name: 'offline', kind: 'offline' })).id;
      const run = await call('POST', '/runs', {
        workspace_id: ws,
        dataset_id: dataset.id,
        sut_id: sutId,
        connection_id: offline,
        metrics: ['exact_match', 'contains', 'token_f1', 'levenshtein', 'rouge_l', 'length'],
      });
      const rowIds = [];
      for (let offset = 0; offset < scoreRows; offset += 1000) {
        const page = await call('POST', `/runs/${run.id}/results/query`, { limit: 1000, offset });
        for (const item of page.items) rowIds.push([item.row_id, item.row.expected_output]);
      }
      const tu = performance.now();
      for (let i = 0; i < rowIds.length; i += 10_000) {
        const chunk = rowIds.slice(i, i + 10_000).map(([row_id, expected], j) => ({
          row_id,
          output: (i + j) % 3 ? expected : `${expected} or so`,
          latency_ms: 40,
        }));
        await call('PUT', `/runs/${run.id}/upload`, {
          results: chunk,
          complete: i + 10_000 >= rowIds.length,
        });
      }
      const uploadSeconds = (performance.now() - tu) / 1000;
      const t0 = performance.now();
      const { result: done, peak } = await rssDuring(service.pid, 100, () => settle(call, run.id));
      const seconds = (performance.now() - t0) / 1000;
      console.log(
        `[${mode}] scoring ${scoreRows} uploaded outputs with 6 deterministic metrics: ${seconds.toFixed(1)} s (${Math.round(scoreRows / seconds)} rows/s; upload ${uploadSeconds.toFixed(1)} s); ${done.state}, pass rate ${done.summary?.pass_rate}; the service's peak RSS ${Math.round(peak)} MB`,
      );
    }
  } catch (err) {
    console.error(service.output().slice(-4000));
    throw err;
  } finally {
    await sut.close();
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
