// An authenticated `GET /datasets/{dataset_id}` while an evaluation run is going, against the same
// GET with nothing else to do, and the run's time with the GETs going against its time alone
// (issue 20: "a GET p99 under a running run rises by at most 1.5x").
//
// Three processes: the product (`node <npm start's flags> dist/src/main.js`, what `npm start` runs, in-process run
// workers), the load generator (autocannon, BENCH_CONNECTIONS=32, BENCH_SECONDS=10), and this one,
// which seeds through the API and serves a local SUT answering every request after BENCH_SUT_MS
// (50). Each of BENCH_ROUNDS=3 rounds measures, in turn:
//   quiet GET   the GET alone;
//   run alone   a run of ROWS (10,000) rows at concurrency 32, from POST /runs to its finished_at;
//   both        the same run again, the GET load starting one second after it (it must end
//               before the run does: ROWS x SUT ms / 32 > BENCH_SECONDS + 1).
// Ratios are taken within a round; each figure is min / median / max over the rounds.
//
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/get-under-run.mjs
//   npm run build && node bench/get-under-run.mjs        # embedded PGlite
//   BENCH_CPU_PROF=/tmp/prof …                           # CPU profiles of the product (and worker)
//   BENCH_WORKERS=process REDIS_URL=redis://127.0.0.1:6379 BENCH_DATABASE_URL=… node bench/get-under-run.mjs
//                                                         # the API with RUN_WORKERS=false and the run's
//                                                         # worker a process of its own (dist/src/worker.js,
//                                                         # at its WORKER_NICE CPU priority: 10 unless set)
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { withDatabase } from './support.mjs';
import { startSut } from './lib/sut.mjs';
import { freePort, load, spread, startServer, workerEnv, workerNodeFlags } from './lib/processes.mjs';
import { EMAIL, httpSut, PASSWORD, productEnv, startProduct } from './lib/service.mjs';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const runRows = Number(process.env.ROWS ?? 10_000);
const sutMs = Number(process.env.BENCH_SUT_MS ?? 50);
const concurrency = 32;
const separateWorkers = process.env.BENCH_WORKERS === 'process';
if (separateWorkers && !(process.env.BENCH_DATABASE_URL && process.env.REDIS_URL))
  throw new Error(
    'BENCH_WORKERS=process needs BENCH_DATABASE_URL and REDIS_URL: workers of their own share PostgreSQL and Redis',
  );

if ((runRows * sutMs) / 1000 / concurrency <= seconds + 1)
  throw new Error(`a run of ${runRows} rows would end before the GET load does: raise ROWS or lower BENCH_SECONDS`);

function client(base, token) {
  return async (method, path, body) => {
    const form = body instanceof FormData;
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body && !form ? { 'content-type': 'application/json' } : {}),
      },
      body: form ? body : body && JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
}

/** Starts a run of the dataset and answers the seconds from POST /runs to its finished_at. */
async function timedRun(api, body) {
  const began = Date.now();
  const run = await api('POST', '/runs', body);
  return {
    id: run.id,
    finished: (async () => {
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const now = await api('GET', `/runs/${run.id}`);
        if (['succeeded', 'failed', 'cancelled'].includes(now.state)) {
          if (now.state !== 'succeeded') throw new Error(`run ${run.id} ended ${now.state}: ${now.state_reason}`);
          return (Date.parse(now.finished_at) - began) / 1000;
        }
      }
    })(),
  };
}

await withDatabase(async (databaseUrl) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-bench-get-run-'));
  const sut = await startSut(sutMs);
  let product;
  let worker;
  try {
    const env = productEnv(dataDir, databaseUrl, {
      UPLOAD_MAX_ROWS: String(runRows),
      ...(separateWorkers ? { RUN_WORKERS: 'false' } : {}),
    });
    // BENCH_CPU_PROF=dir: the product (and a worker process) write a CPU profile there when they stop.
    const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
    product = await startProduct(env, profile);
    if (separateWorkers) {
      // Ready once it has said so in its log; its own port is only for probes.
      worker = await startServer(
        [...profile, ...workerNodeFlags, 'dist/src/worker.js'],
        { ...workerEnv, ...env, RUN_WORKERS: 'true', HOST: '127.0.0.1', PORT: String(await freePort()) },
        (out) => (/worker(s)? (started|ready|running)/i.test(out) ? 'worker' : undefined),
      );
    }
    const { access_token: token } = await client(product.url)('POST', '/auth/token', {
      email: EMAIL,
      password: PASSWORD,
    });
    const api = client(product.url, token);
    const ws = (await api('POST', '/workspaces', { name: 'bench' })).id;
    const form = new FormData();
    form.append('name', 'run-bench');
    const lines = Array.from({ length: runRows }, (_, i) =>
      JSON.stringify({ input: `question ${i}`, expected_output: `answer to question ${i}` }),
    );
    form.append('file', new Blob([lines.join('\n')], { type: 'application/x-ndjson' }), 'rows.jsonl');
    const dataset = await api('POST', `/datasets/upload?workspace_id=${ws}`, form);
    const runBody = (await httpSut(api, ws, sut.url, concurrency)).runOf(dataset.id);
    const target = `${product.url}/datasets/${dataset.id}`;
    const headers = { authorization: `Bearer ${token}` };
    await load(target, { headers, connections, seconds: 3 }); // warm-up
    const rows = [];
    for (let round = 1; round <= rounds; round++) {
      const quiet = await load(target, { headers, connections, seconds });
      const alone = await (await timedRun(api, runBody)).finished;
      const run = await timedRun(api, runBody);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const busy = await load(target, { headers, connections, seconds });
      const withGets = await run.finished;
      for (const [name, r] of Object.entries({ quiet, busy }))
        if (r.errors) throw new Error(`${name} GETs: ${r.errors} errors or non-2xx answers in round ${round}`);
      rows.push({ quiet, busy, alone, withGets });
      process.stderr.write(
        `round ${round}: GET p99 ${quiet.p99} ms alone, ${busy.p99} ms under the run; run ${alone.toFixed(1)} s alone, ${withGets.toFixed(1)} s under the GETs\n`,
      );
    }
    const mode = `${databaseUrl ? 'PostgreSQL' : 'embedded PGlite'}, ${separateWorkers ? 'workers in a process of their own (BullMQ on Redis)' : 'in-process workers'}`;
    console.log(
      `\n${mode}: GET /datasets/{dataset_id} at ${connections} connections for ${seconds} s, and a run of ${runRows} rows (SUT ${sutMs} ms, concurrency ${concurrency}), ${rounds} rounds (min / median / max); node ${process.version}, ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}`,
    );
    console.log('| measure | alone | together | together / alone |\n|---|---|---|---|');
    const line = (name, a, b, digits) =>
      console.log(
        `| ${name} | ${spread(a, digits)} | ${spread(b, digits)} | ${spread(
          a.map((x, i) => b[i] / x),
          2,
        )} |`,
      );
    const measures = [
      ['GET p99 (ms)', (r) => r.quiet.p99, (r) => r.busy.p99, 1],
      ['GET p50 (ms)', (r) => r.quiet.p50, (r) => r.busy.p50, 1],
      ['GET req/s', (r) => r.quiet.rps, (r) => r.busy.rps, 0],
      ['run (s)', (r) => r.alone, (r) => r.withGets, 1],
    ];
    for (const [name, alone, together, digits] of measures) line(name, rows.map(alone), rows.map(together), digits);
  } finally {
    await worker?.stop();
    await product?.stop();
    await sut.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
