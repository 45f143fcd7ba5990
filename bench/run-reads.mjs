// Reading a large run, through the real HTTP API: the peak RSS of the API process (this one)
// while it answers GET /runs/diff (with its statistics), the diff's CSV export and the run's
// Parquet export, over two runs of ROWS rows (100,000 by default) with two metrics and a
// dimension. The runs are offline runs whose items are filled in with SQL (outputs of about
// 500 characters, scores, verdicts), so no SUT is called: what is measured is the read side only.
//
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/run-reads.mjs
//   npm run build && ROWS=20000 node bench/run-reads.mjs      # embedded PGlite
//
// Environment: ROWS (100000), RUN_PAGE_SIZE (the service's, 500).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { asNpmStartRuns, withBenchApp, withDatabase } from './support.mjs';

asNpmStartRuns();

const rows = Number(process.env.ROWS ?? 100_000);
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
const mb = (bytes) => Math.round(bytes / 1e6);

/** The process's peak RSS while `work` runs, sampled every 50 ms, from a collected baseline. */
async function peakRss(work) {
  gc();
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 50);
  const t0 = Date.now();
  try {
    const result = await work();
    return { result, before, peak: Math.max(peak, process.memoryUsage.rss()), seconds: (Date.now() - t0) / 1000 };
  } finally {
    clearInterval(timer);
  }
}

/** The response's bytes, counted as they arrive and dropped (a client saving the file). */
const counted = (req) =>
  req.buffer(true).parse((res, done) => {
    let n = 0;
    res.on('data', (c) => (n += c.length));
    res.on('end', () => done(null, n));
  });

await withDatabase(async (databaseUrl) =>
  withBenchApp(
    databaseUrl,
    {
      UPLOAD_MAX_ROWS: String(rows),
      UPLOAD_MAX_BYTES: String(1024 * 1024 * 1024),
      BODY_LIMIT: '64mb',
      ...(process.env.RUN_PAGE_SIZE ? { RUN_PAGE_SIZE: process.env.RUN_PAGE_SIZE } : {}),
    },
    async ({ app, http, auth, ws }) => {
      const mode = databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
      const lines = [];
      for (let i = 0; i < rows; i++)
        lines.push(
          JSON.stringify({
            input: `question ${i}`,
            expected_output: `answer to question ${i}`,
            topic: `t${i % 5}`,
          }),
        );
      const dataset = (
        await http
          .post('/datasets/upload')
          .query({ workspace_id: ws })
          .set(auth)
          .field('name', 'reads')
          .attach('file', Buffer.from(lines.join('\n')), 'reads.jsonl')
          .expect(201)
      ).body;
      for (let v = 0; v < 5; v++)
        await http
          .post(`/datasets/${dataset.id}/dimensions:assign`)
          .set(auth)
          .send({ dimension: 'topic', value: `t${v}`, rule: { field: 'topic', op: 'eq', value: `t${v}` } })
          .expect(201);
      const sutId = (await http.post('/suts').set(auth).send({ workspace_id: ws, name: 'reads' }).expect(201)).body.id;
      const connection = (
        await http.post(`/suts/${sutId}/connections`).set(auth).send({ name: 'offline', kind: 'offline' }).expect(201)
      ).body.id;
      const ids = [];
      for (let r = 0; r < 2; r++) {
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
            })
            .expect(202)
        ).body;
        ids.push(run.id);
      }
      // Answers and scores written straight to the items: the candidate (second run) moves on a third of the rows.
      const db = app.get((await import('#libs/database/unit-of-work.js')).Db);
      for (const [r, id] of ids.entries()) {
        await db.query(
          `UPDATE run_items SET status = 'done', output = repeat('answer ', 70) || (ordinal * ${r + 1})::text, latency_ms = 40 + ordinal % 17,
                  scores = jsonb_build_object('exact_match', jsonb_build_object('score', ((ordinal + ${r}) % 3 > 0)::int, 'passed', (ordinal + ${r}) % 3 > 0),
                                              'token_f1', jsonb_build_object('score', ((ordinal * ${r + 7}) % 100) / 100.0, 'passed', (ordinal * ${r + 7}) % 100 >= 50)),
                  passed = (ordinal + ${r}) % 3 > 0, called_at = now(), scored_at = now()
            WHERE run_id = $1`,
          [id],
        );
        await db.query(
          `UPDATE runs SET state = 'succeeded', completed = total, started_at = now(), finished_at = now() WHERE id = $1`,
          [id],
        );
      }
      const [base, candidate] = ids;
      console.log(`[${mode}] two runs of ${rows} rows, RUN_PAGE_SIZE ${process.env.RUN_PAGE_SIZE ?? 500}`);
      const report = (what, m, extra = '') =>
        console.log(
          `  ${what}: ${m.seconds.toFixed(1)} s, rss ${mb(m.before)} MB before, peak ${mb(m.peak)} MB (+${mb(m.peak - m.before)} MB)${extra}`,
        );

      const get = await peakRss(async () => {
        for (let i = 0; i < 20; i++) await http.get(`/runs/${candidate}`).set(auth).expect(200);
      });
      report('GET /runs/{id} x20', get, `, ${((get.seconds * 1000) / 20).toFixed(1)} ms each`);

      const diff = await peakRss(
        async () => (await http.get('/runs/diff').query({ base, candidate }).set(auth).expect(200)).body,
      );
      report('GET /runs/diff', diff, `, ${diff.result.summary.regressed} regressed of ${diff.result.summary.rows}`);

      const csv = await peakRss(async () =>
        counted(http.get('/runs/diff/export').query({ base, candidate, format: 'csv' }).set(auth)).expect(200),
      );
      report('GET /runs/diff/export (csv)', csv, `, ${mb(csv.result.body)} MB`);

      const link = (await http.get(`/runs/${candidate}/parquet-url`).set(auth).expect(200)).body;
      const url = new URL(link.url);
      const parquet = await peakRss(async () => counted(http.get(url.pathname + url.search)).expect(200));
      report('Parquet export', parquet, `, ${mb(parquet.result.body)} MB`);
    },
  ),
);
