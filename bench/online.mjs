// Online evaluation under live load, through the real service in its own process (as `npm start`
// runs it, the workers in process), on PostgreSQL. Three phases, each on a fresh database (so a
// fresh workspace and trace dataset) with a fresh service, EXPORTERS exporter processes
// (bench/lib/otlp-exporter.mjs) sending batches of 512 spans to POST /v1/traces for SECONDS:
//
// A. no evaluator: landing throughput (spans landed per second, first export to last span landed);
// B. an evaluator created before the load, sampling 10% of the traces, with a deterministic metric
//    (`contains` "ships": the one trace in five whose root answers "Sorry, I cannot help" fails)
//    and a judged metric whose judge is an HTTP server in this process speaking the OpenAI chat
//    protocol, answering `{"score": 5, "reason": "ok"}` after JUDGE_MS (50): landing throughput
//    (B/A, aim at least 0.9), lag from each sampled trace's acknowledgement (its batch's) to its
//    scores' `scored_at` (p50, p99), the service's RSS per 10 s, judge calls;
// C. as B, with the service killed by SIGKILL halfway and started again (ONLINE_LEASE_SECONDS=10,
//    so the killed worker's leases run out fast): once every sampled trace is scored, every one of
//    them has exactly one score per metric, no other trace has one, and no target has two; judge
//    calls against traces scored (a call repeats for a trace claimed when the service was killed).
//
// The expected set is computed here: the distinct trace ids landed in the dataset that
// `isSampled` (#libs/evaluation/online/sampling.js, built in dist/) takes at 0.1. Exits 1 when a check fails.
//
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/online.mjs
//
// EXPORTERS (default 4), SECONDS (default 60), PHASES (default ABC; e.g. AB, or ABAB to alternate),
// JUDGE_MS (default 50), SCORE_TIMEOUT_S (default 600: how long C waits for every score), VERBOSE
// (default 1: the pipeline per 10 s, spans landed, targets taken and scored, jobs running; 0: none).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { isSampled } from '#libs/evaluation/online/sampling.js';
import { BATCH, SERVICE_NAME, SPANS_PER_TRACE, isRefusal, startExporters, traceIdOf } from './lib/otlp-exporter.mjs';
import { cpuSeconds, freePort, root, serviceEnv, serviceNodeFlags } from './lib/processes.mjs';
import { EMAIL, PASSWORD, api, productEnv } from './lib/service.mjs';
import { withDatabase } from './support.mjs';

const EXPORTERS = Number(process.env.EXPORTERS ?? 4);
const SECONDS = Number(process.env.SECONDS ?? 60);
const PHASES = [...(process.env.PHASES ?? 'ABC')];
const JUDGE_MS = Number(process.env.JUDGE_MS ?? 50);
const SCORE_TIMEOUT_S = Number(process.env.SCORE_TIMEOUT_S ?? 600);
const VERBOSE = process.env.VERBOSE !== '0';
const RATE = 0.1;
const METRICS = ['ships', 'helpful'];
/** The span landed before the load to create the dataset: its trace is not sampled at 10% (randomness 1). */
const WARM_UP_TRACE = `${'0'.repeat(31)}1`;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted, p) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;
const rssOf = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
  } catch {
    return 0;
  }
};

if (!process.env.BENCH_DATABASE_URL) {
  console.error(
    'bench/online.mjs runs on PostgreSQL: set BENCH_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test)',
  );
  process.exit(2);
}

const results = [];
for (const phase of PHASES) results.push(await withDatabase((databaseUrl) => runPhase(phase, databaseUrl)));
summarise(results);

/**
 * CPU seconds so far of the service process and of the PostgreSQL sessions on its database (the
 * server's backends, read from /proc: the benchmark runs beside the database).
 */
async function cpuNow(db, pid) {
  const backends = (
    await db.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')
  ).rows;
  const database = new Map();
  for (const { pid: backend } of backends) {
    try {
      database.set(backend, cpuSeconds(backend));
    } catch {
      // ended meanwhile
    }
  }
  return { service: cpuSeconds(pid), database };
}

/** Database CPU seconds between two cpuNow readings: of the sessions alive at the second (a session that ended between is not counted). */
function databaseCpu(before, after) {
  let sum = 0;
  for (const [pid, seconds] of after.database) sum += seconds - (before?.database.get(pid) ?? 0);
  return sum;
}

/** The judge: POST /v1/chat/completions answered after JUDGE_MS; counts the calls per trace (the trace id is in the prompt). */
async function startJudge() {
  const calls = new Map();
  let total = 0;
  // Calls in flight: the most at once, and their time-weighted mean while any is.
  const flight = { now: 0, most: 0, busyMs: 0, weightedMs: 0, since: 0 };
  const move = (by) => {
    const at = performance.now();
    if (flight.now) {
      flight.busyMs += at - flight.since;
      flight.weightedMs += flight.now * (at - flight.since);
    }
    flight.since = at;
    flight.now += by;
    flight.most = Math.max(flight.most, flight.now);
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      total++;
      move(1);
      const trace = /[0-9a-f]{32}/.exec(body)?.[0] ?? '?';
      calls.set(trace, (calls.get(trace) ?? 0) + 1);
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'chatcmpl-bench',
            object: 'chat.completion',
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: '{"score": 5, "reason": "ok"}' },
                finish_reason: 'stop',
              },
            ],
            usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
          }),
        );
        move(-1);
      }, JUDGE_MS);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    calls,
    total: () => total,
    flight: () => ({ most: flight.most, mean: flight.busyMs ? flight.weightedMs / flight.busyMs : 0 }),
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  };
}

/** The service as `npm start` runs it; `boot()` (again after a kill) waits until /ready answers 200. */
async function service(databaseUrl, dataDir) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !['DATABASE_URL', 'REDIS_URL'].includes(name)),
  );
  const env = {
    ...inherited,
    ...serviceEnv,
    ...productEnv(dataDir, databaseUrl, { LOG_LEVEL: 'warn', ONLINE_LEASE_SECONDS: '10' }),
    PORT: String(port),
    HOST: '127.0.0.1',
  };
  const it = { base, child: null };
  it.boot = async () => {
    it.child = spawn(process.execPath, [...serviceNodeFlags, 'dist/src/main.js'], {
      cwd: root,
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    for (let i = 0; i < 1200; i++) {
      const status = await fetch(`${base}/ready`)
        .then((r) => r.status)
        .catch(() => 0);
      if (status === 200) return;
      await sleep(100);
    }
    throw new Error('the service did not become ready');
  };
  it.kill = async () => {
    const exited = new Promise((resolve) => it.child.once('exit', resolve));
    it.child.kill('SIGKILL');
    await exited;
  };
  return it;
}

/** One phase on a fresh database: its figures. */
async function runPhase(phase, databaseUrl) {
  const evaluated = phase !== 'A';
  const kill = phase === 'C';
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-bench-online-'));
  const svc = await service(databaseUrl, dataDir);
  const db = new pg.Client({ connectionString: databaseUrl });
  const judge = evaluated ? await startJudge() : null;
  const load = (await import('node:os')).loadavg().map((l) => l.toFixed(2));
  try {
    await svc.boot();
    await db.connect();
    const token = (await api(svc.base, 'POST', '/auth/token', null, { email: EMAIL, password: PASSWORD })).access_token;
    const call = (method, path, body) => api(svc.base, method, path, token, body);
    const ws = (await call('POST', '/workspaces', { name: `bench-${phase}` })).id;
    const key = (await call('POST', `/workspaces/${ws}/api-keys`, { name: 'bench-exporters', role: 'member' })).key;

    // The trace dataset the exporters' service.name names, created by one landed span.
    const now = Date.now();
    const warmUp = await call('POST', '/traces/land:inline', {
      workspace_id: ws,
      dataset_name: SERVICE_NAME,
      records: [
        {
          trace_id: WARM_UP_TRACE,
          span_id: '0000000000000001',
          name: 'warm-up',
          start_time: new Date(now - 1000).toISOString(),
          end_time: new Date(now).toISOString(),
        },
      ],
    });
    let run = warmUp;
    while (run.state !== 'succeeded') {
      if (['failed', 'cancelled'].includes(run.state)) throw new Error(`the warm-up landing ${run.state}`);
      await sleep(200);
      run = await call('GET', `/traces/runs/${warmUp.id}`);
    }
    const datasetId = run.dataset_id;

    let evaluatorId = null;
    if (evaluated) {
      const judgeId = (
        await call('POST', '/judges', {
          workspace_id: ws,
          name: 'bench-judge',
          provider: 'openai_compatible',
          base_url: judge.url,
          model: 'gpt-4o-mini',
          max_attempts: 3,
          max_concurrency: 8,
          timeout_ms: 10_000,
        })
      ).id;
      await call('POST', '/metric-configs', {
        workspace_id: ws,
        name: 'ships',
        kind: 'deterministic',
        metric: 'contains',
        params: { substring: 'ships' },
      });
      await call('POST', '/metric-configs', {
        workspace_id: ws,
        name: 'helpful',
        kind: 'judged',
        metric: 'llm_judge',
        judged: {
          rubric: 'Question: {{input}}\nAnswer: {{output}}\nIs the answer helpful?',
          scale: { type: 'numeric', min: 1, max: 5 },
          pass_threshold: 0.75,
          judge_id: judgeId,
        },
      });
      evaluatorId = (
        await call('POST', '/online-evaluators', {
          workspace_id: ws,
          dataset_id: datasetId,
          name: 'bench-online',
          sampling_rate: RATE,
          metrics: METRICS.map((name) => ({ name })),
        })
      ).id;
    }

    // The load; the stream's landed count and the service's RSS every 100 ms meanwhile.
    const cpuAtStart = await cpuNow(db, svc.child.pid);
    const t0 = Date.now();
    const exporters = startExporters(`${svc.base}/v1/traces`, key, SECONDS, EXPORTERS);
    const landedAt = [];
    const rss = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        rss.push({ at: Date.now(), bytes: rssOf(svc.child.pid) });
        try {
          const live = await call('GET', `/traces/datasets/${datasetId}/live`);
          if (live.ingest_run_id) {
            const counts = (await call('GET', `/traces/runs/${live.ingest_run_id}`)).counts;
            landedAt.push({ at: Date.now(), landed: counts.landed + counts.deduplicated, pending: counts.pending });
          }
        } catch {
          // down while killed
        }
        await sleep(100);
      }
    })();
    // Where the evaluator's pipeline is, every second: targets taken into its ledger and scored,
    // and which jobs hold the service's queue slots (QUEUE_CONCURRENCY).
    const pipeline = [];
    const watcher = (async () => {
      while (sampling) {
        const at = Date.now();
        try {
          const ledger = evaluatorId
            ? await db.query(
                `SELECT count(*)::int AS taken, count(*) FILTER (WHERE state = 'scored')::int AS scored FROM online_targets WHERE evaluator_id = $1`,
                [evaluatorId],
              )
            : { rows: [{ taken: 0, scored: 0 }] };
          const jobs = await db.query(
            `SELECT type, count(*)::int AS n FROM jobs WHERE status = 'running' GROUP BY type`,
          );
          pipeline.push({ at, ...ledger.rows[0], running: Object.fromEntries(jobs.rows.map((r) => [r.type, r.n])) });
        } catch {
          // the bench's own connection is not the service's: it stays up across the kill
        }
        await sleep(Math.max(0, 1000 - (Date.now() - at)));
      }
    })();
    let killNote = '';
    if (kill) {
      await sleep((SECONDS * 1000) / 2);
      const killedAt = Date.now();
      await svc.kill();
      await svc.boot();
      killNote = `SIGKILL at ${seconds(killedAt - t0)}, back and ready ${seconds(Date.now() - killedAt)} later`;
    }
    await exporters.done;
    const sentUntil = Date.now();
    for (;;) {
      const last = landedAt.at(-1);
      if (last && last.at > sentUntil && last.pending === 0) break;
      await sleep(200);
    }
    const cpuLanding = await cpuNow(db, svc.child.pid);
    const lastLanded = landedAt.find((s) => s.pending === 0 && s.at > sentUntil).at;
    const live = await call('GET', `/traces/datasets/${datasetId}/live`);
    const counts = (await call('GET', `/traces/runs/${live.ingest_run_id}`)).counts;
    const acked = exporters.acks.reduce((n, a) => n + a.spans, 0);
    const figures = {
      phase,
      load,
      killNote,
      acked,
      exports: exporters.acks.length,
      ...exporters.counts,
      landed: counts.landed,
      deduplicated: counts.deduplicated,
      wall: (lastLanded - t0) / 1000,
      rate: counts.landed / ((lastLanded - t0) / 1000),
      failures: [],
      // CPU seconds from the first export to the last span landed (after a kill: since the restart).
      cpuService: cpuLanding.service - (kill ? 0 : cpuAtStart.service),
      cpuDatabase: databaseCpu(kill ? null : cpuAtStart, cpuLanding),
    };
    if (counts.landed !== acked) figures.failures.push(`landed ${counts.landed} of ${acked} acknowledged spans`);

    if (evaluated) {
      // Which traces landed (read back), which of them the rate samples, and when each was acknowledged.
      const ackOf = new Map();
      for (const a of exporters.acks)
        for (let k = 0; k < a.spans / SPANS_PER_TRACE; k++)
          ackOf.set(traceIdOf(a.exporter, a.batch, k), { at: a.at, refusal: isRefusal(a.exporter, a.batch, k) });
      const landedTraces = (
        await db.query(
          `SELECT DISTINCT data->>'trace_id' AS trace_id FROM dataset_rows WHERE dataset_id = $1 AND removed_in IS NULL`,
          [datasetId],
        )
      ).rows.map((r) => r.trace_id);
      const expected = new Set(landedTraces.filter((id) => id !== WARM_UP_TRACE && isSampled(id, RATE)));
      figures.traces = landedTraces.length - 1;
      figures.expected = expected.size;
      const unknown = landedTraces.filter((id) => id !== WARM_UP_TRACE && !ackOf.has(id)).length;
      if (unknown) figures.failures.push(`${unknown} landed traces no acknowledged batch holds`);

      // Every expected trace scored by both metrics (or the time is up).
      const scoredBy = async () =>
        Number(
          (
            await db.query(
              'SELECT count(DISTINCT trace_id) AS n FROM trace_scores WHERE evaluator_id = $1 GROUP BY metric ORDER BY n LIMIT 1',
              [evaluatorId],
            )
          ).rows[0]?.n ?? 0,
        );
      const scoreDeadline = Date.now() + SCORE_TIMEOUT_S * 1000;
      while ((await scoredBy()) < expected.size && Date.now() < scoreDeadline) await sleep(500);
      figures.allScoredAfter = (Date.now() - lastLanded) / 1000;
      await sleep(2000); // anything late (a second write) would show now

      const scores = (
        await db.query(
          'SELECT trace_id, target_key, metric, passed, scored_at FROM trace_scores WHERE evaluator_id = $1',
          [evaluatorId],
        )
      ).rows;
      const perTrace = new Map();
      for (const s of scores) {
        const byMetric = perTrace.get(s.trace_id) ?? new Map();
        byMetric.set(s.metric, [...(byMetric.get(s.metric) ?? []), s]);
        perTrace.set(s.trace_id, byMetric);
      }
      const missing = [...expected].filter((id) => METRICS.some((m) => perTrace.get(id)?.get(m)?.length !== 1));
      const unexpected = [...perTrace.keys()].filter((id) => !expected.has(id));
      const duplicates = (
        await db.query(
          'SELECT target_key, metric, count(*) AS n FROM trace_scores WHERE evaluator_id = $1 GROUP BY target_key, metric HAVING count(*) > 1',
          [evaluatorId],
        )
      ).rows;
      const targets = Object.fromEntries(
        (
          await db.query('SELECT state, count(*) AS n FROM online_targets WHERE evaluator_id = $1 GROUP BY state', [
            evaluatorId,
          ])
        ).rows.map((r) => [r.state, Number(r.n)]),
      );
      // The deterministic metric fails exactly the refusals.
      const shipsWrong = scores.filter(
        (s) => s.metric === 'ships' && s.passed !== !ackOf.get(s.trace_id)?.refusal,
      ).length;
      Object.assign(figures, { scores: scores.length, missing: missing.length, unexpected: unexpected.length });
      Object.assign(figures, { duplicates: duplicates.length, targets, shipsWrong });
      if (missing.length)
        figures.failures.push(`${missing.length} sampled traces without exactly one score per metric`);
      if (unexpected.length) figures.failures.push(`${unexpected.length} traces scored that the rate does not sample`);
      if (duplicates.length) figures.failures.push(`${duplicates.length} targets with two scores of one metric`);
      if (shipsWrong) figures.failures.push(`${shipsWrong} "ships" scores disagree with the planted answers`);

      // Lag: a trace's acknowledgement to its scores (the later of its metrics' scored_at).
      const lags = [];
      for (const [id, byMetric] of perTrace) {
        const ack = ackOf.get(id);
        if (!ack) continue;
        const scoredAt = Math.max(...[...byMetric.values()].flat().map((s) => s.scored_at.getTime()));
        lags.push(scoredAt - ack.at);
      }
      lags.sort((a, b) => a - b);
      figures.lag = { p50: percentile(lags, 50), p99: percentile(lags, 99), max: lags.at(-1) };
      const calledTraces = [...judge.calls.keys()].filter((id) => id !== '?');
      figures.judge = {
        calls: judge.total(),
        traces: calledTraces.length,
        repeated: judge.total() - calledTraces.length,
        scored: perTrace.size,
        ...judge.flight(),
      };
    }

    sampling = false;
    await Promise.all([sampler, watcher]);
    figures.pipeline = windowsOf(t0, pipeline, landedAt);
    figures.rssWindows = [];
    for (let from = t0; from < sentUntil; from += 10_000) {
      const inWindow = rss.filter((s) => s.at >= from && s.at < from + 10_000 && s.bytes > 0);
      figures.rssWindows.push(inWindow.length ? Math.round(Math.max(...inWindow.map((s) => s.bytes)) / 1e6) : null);
    }
    report(figures);
    return figures;
  } finally {
    svc.child?.kill('SIGKILL');
    await db.end().catch(() => undefined);
    await judge?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Per 10 s from `t0` until the last sample: spans landed, targets taken and scored (at its end), and the share of seconds each job type ran. */
function windowsOf(t0, pipeline, landedAt) {
  const windows = [];
  const end = pipeline.at(-1)?.at ?? t0;
  for (let from = t0; from <= end; from += 10_000) {
    const inWindow = pipeline.filter((p) => p.at >= from && p.at < from + 10_000);
    if (!inWindow.length) continue;
    const landed = landedAt.filter((l) => l.at < from + 10_000).at(-1)?.landed ?? 0;
    const running = {};
    for (const p of inWindow)
      for (const type of Object.keys(p.running)) running[type] = (running[type] ?? 0) + 1 / inWindow.length;
    const last = inWindow.at(-1);
    windows.push({ from: (from - t0) / 1000, landed, taken: last.taken, scored: last.scored, running });
  }
  return windows;
}

function report(f) {
  const title = {
    A: 'A, no evaluator',
    B: `B, an evaluator at ${RATE * 100}% (deterministic + judged, judge ${JUDGE_MS} ms)`,
    C: 'C, as B with SIGKILL and restart halfway',
  }[f.phase];
  console.log(
    `[PostgreSQL] phase ${title}: ${EXPORTERS} exporters, batches of ${BATCH} spans, ${SECONDS} s (load average ${f.load.join(' ')} at its start)`,
  );
  if (f.killNote) console.log(`  ${f.killNote}`);
  console.log(
    `  acknowledged ${f.acked} spans in ${f.exports} exports (${f.refused} answered 429/503, ${f.failed} failed to connect; all retried); landed ${f.landed}, deduplicated ${f.deduplicated}`,
  );
  console.log(
    `  landing: ${Math.round(f.rate)} spans/s (${f.wall.toFixed(1)} s from the first export to the last span landed); meanwhile CPU ${f.cpuService.toFixed(1)} s in the service, ${f.cpuDatabase.toFixed(1)} s in its database sessions (${((1e6 * (f.cpuService + f.cpuDatabase)) / f.landed).toFixed(0)} µs a span)`,
  );
  if (f.expected !== undefined) {
    console.log(
      `  ${f.traces} traces landed, ${f.expected} sampled at ${RATE} (${((100 * f.expected) / f.traces).toFixed(2)} %); every one scored ${f.allScoredAfter.toFixed(1)} s after the last span landed; targets ${JSON.stringify(f.targets)}`,
    );
    console.log(
      `  lag, acknowledgement to score: p50 ${seconds(f.lag.p50)}, p99 ${seconds(f.lag.p99)}, max ${seconds(f.lag.max)}`,
    );
    console.log(
      `  scores: ${f.scores} rows; sampled traces without exactly one per metric ${f.missing}, traces scored not sampled ${f.unexpected}, targets with a metric twice ${f.duplicates}; "ships" disagreeing with the planted answers ${f.shipsWrong}`,
    );
    console.log(
      `  judge: ${f.judge.calls} calls for ${f.judge.traces} traces (${f.judge.repeated} repeated), ${f.judge.scored} traces scored; calls in flight at most ${f.judge.most}, ${f.judge.mean.toFixed(1)} on average while any was`,
    );
  }
  console.log(`  service peak RSS per 10 s window (MB): ${f.rssWindows.join(', ')}`);
  if (VERBOSE) {
    console.log(
      '  per 10 s (at its end): spans landed, targets taken, targets scored; share of the seconds each job ran',
    );
    for (const w of f.pipeline)
      console.log(
        `    ${String(w.from).padStart(4)} s  ${String(w.landed).padStart(7)}  ${String(w.taken).padStart(5)}  ${String(w.scored).padStart(5)}  ${Object.entries(
          w.running,
        )
          .map(([type, share]) => `${type} ${Math.round(share * 100)}%`)
          .join(', ')}`,
      );
  }
  for (const failure of f.failures) console.log(`  FAILED: ${failure}`);
}

function summarise(all) {
  const mean = (phase) => {
    const rates = all.filter((f) => f.phase === phase).map((f) => f.rate);
    return rates.length ? rates.reduce((a, b) => a + b, 0) / rates.length : NaN;
  };
  if (all.some((f) => f.phase === 'A') && all.some((f) => f.phase === 'B'))
    console.log(
      `landing with the evaluator / without: ${(mean('B') / mean('A')).toFixed(2)} (B ${Math.round(mean('B'))}, A ${Math.round(mean('A'))} spans/s; aim at least 0.9)`,
    );
  const failed = all.filter((f) => f.failures.length);
  console.log(failed.length ? `FAILED in phase ${failed.map((f) => f.phase).join(', ')}` : 'every check passed');
  process.exitCode = failed.length ? 1 : 0;
}
