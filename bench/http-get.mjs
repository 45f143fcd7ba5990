// An authenticated `GET /datasets/{dataset_id}` under load, as a ratio against bare twins measured
// in the same run. Four servers, each a process of its own, on the same database:
//   product      `node <npm start's flags> dist/src/main.js`, what `npm start` runs (its defaults: JSON logs at info,
//                in-process workers), logs to /dev/null;
//   indexed      bench/lib/twin.mjs: Express 5 + a JWT check + one indexed lookup;
//   product-sql  bench/lib/twin.mjs: Express 5 + a JWT check + the statements the product issues
//                (warm, as the product with its access cache: the dataset's statement only);
//   nest-sql     bench/lib/twin.mjs: the same in a bare NestJS app (a global JWT guard, one
//                controller): the framework's own cost, without the product's pipeline.
// The load generator (autocannon, BENCH_CONNECTIONS=32 keep-alive connections, BENCH_SECONDS=10
// per measure) is a process of its own too. After a warm-up, BENCH_ROUNDS=3 rounds measure the
// four in turn, the order reversed every other round; each figure is min / median / max over
// the rounds, and each ratio is taken within a round. Besides req/s, each server's CPU time a
// request (from /proc, over the measure): the load generator and PostgreSQL share the two cores
// with the server, so req/s moves with the machine's load more than this does.
//
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/http-get.mjs
//   npm run build && node bench/http-get.mjs        # embedded PGlite; the twins open copies of its data directory
//   BENCH_CPU_PROF=/tmp/prof …                      # each server writes <server>.cpuprofile there when it stops
//   BENCH_SERVICE_FLAGS=--max-semi-space-size=32 …  # node flags for the product beyond npm start's
//
// Creates its own database (or data directory) and removes it afterwards.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { withDatabase } from './support.mjs';
import { load, spread, startServer } from './lib/processes.mjs';
import { api, EMAIL, PASSWORD, productEnv, startProduct } from './lib/service.mjs';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

/** Node's flags for a server's CPU profile, written to BENCH_CPU_PROF as <server>.cpuprofile when it stops. */
const profile = (server) =>
  process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`, `--cpu-prof-name=${server}.cpuprofile`]
    : [];

async function startTwin(kind, target, env) {
  return startServer([...profile(kind), 'bench/lib/twin.mjs', kind, target], env, (output) => {
    const m = /listening (\d+)/.exec(output);
    return m ? `http://127.0.0.1:${m[1]}` : undefined;
  });
}

/** A workspace with a 200-row dataset of two versions, through the product's API; answers the token and the dataset id. */
async function seed(base) {
  const { access_token: token } = await api(base, 'POST', '/auth/token', undefined, {
    email: EMAIL,
    password: PASSWORD,
  });
  const ws = await api(base, 'POST', '/workspaces', token, { name: 'bench' });
  const csv = (from) =>
    [
      'id,question,answer',
      ...Array.from({ length: 200 }, (_, i) => `${from + i},"What is ${from + i}?","It is ${from + i}"`),
    ].join('\n');
  const upload = (name, extra = {}) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(extra)) form.append(k, v);
    form.append('file', new Blob([csv(name === 'first' ? 0 : 1000)], { type: 'text/csv' }), `${name}.csv`);
    return form;
  };
  const dataset = await api(
    base,
    'POST',
    `/datasets/upload?workspace_id=${ws.id}`,
    token,
    upload('first', { name: 'qa' }),
  );
  await api(
    base,
    'POST',
    `/datasets/upload?workspace_id=${ws.id}`,
    token,
    upload('second', { dataset_id: dataset.id }),
  );
  return { token, datasetId: dataset.id };
}

await withDatabase(async (databaseUrl) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-bench-get-'));
  const env = productEnv(join(dataDir, 'product'), databaseUrl);
  const servers = [];
  try {
    let product = await startProduct(env, profile('product'));
    servers.push(product);
    const { token, datasetId } = await seed(product.url);
    let twinTargets = { indexed: databaseUrl, 'product-sql': databaseUrl, 'nest-sql': databaseUrl };
    if (!databaseUrl) {
      // PGlite serves one process: each twin opens a copy of the product's database, taken while it is stopped.
      await product.stop();
      servers.length = 0;
      twinTargets = {};
      for (const kind of ['indexed', 'product-sql', 'nest-sql']) {
        twinTargets[kind] = join(dataDir, kind);
        cpSync(join(env.DATA_DIR, 'pgdata'), twinTargets[kind], { recursive: true });
      }
      product = await startProduct(env, profile('product'));
      servers.push(product);
    }
    const targets = { product: product.url };
    const pids = { product: product.pid };
    for (const kind of ['indexed', 'product-sql', 'nest-sql']) {
      const twin = await startTwin(kind, twinTargets[kind], { JWT_SECRET: env.JWT_SECRET });
      servers.push(twin);
      targets[kind] = twin.url;
      pids[kind] = twin.pid;
    }
    const headers = { authorization: `Bearer ${token}` };
    for (const [name, base] of Object.entries(targets)) {
      const res = await fetch(`${base}/datasets/${datasetId}`, { headers });
      if (res.status !== 200)
        throw new Error(`${name}: GET /datasets/{id} answered ${res.status}: ${await res.text()}`);
      await load(`${base}/datasets/${datasetId}`, { headers, connections, seconds: 3 }); // warm-up
    }
    const results = { product: [], indexed: [], 'product-sql': [], 'nest-sql': [] };
    for (let round = 0; round < rounds; round++) {
      const order = Object.keys(results);
      if (round % 2) order.reverse();
      for (const name of order) {
        const r = await load(`${targets[name]}/datasets/${datasetId}`, {
          headers,
          connections,
          seconds,
          pid: pids[name],
        });
        if (r.errors) throw new Error(`${name}: ${r.errors} errors or non-2xx answers in round ${round + 1}`);
        results[name].push(r);
        process.stderr.write(
          `round ${round + 1} ${name}: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms, ${Math.round(r.cpuUs)} us of CPU a request\n`,
        );
      }
    }
    const mode = databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
    console.log(
      `\n${mode}: GET /datasets/{dataset_id}, ${connections} connections, ${seconds} s per measure, ${rounds} rounds (min / median / max); node ${process.version}, ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}`,
    );
    console.log(
      '| server | req/s | p50 ms | p99 ms | product / this (req/s) | server CPU a request (us) | this / product (CPU a request) |\n|---|---|---|---|---|---|---|',
    );
    // The CPU ratio is the rate the product would reach, as a share of this server's, were the server's CPU all that limited both.
    const ratio = (name, of) =>
      name === 'product'
        ? ''
        : spread(
            results[name].map((r, i) => of(results.product[i], r)),
            2,
          );
    for (const [name, rs] of Object.entries(results)) {
      const cells = [
        spread(rs.map((r) => r.rps)),
        spread(
          rs.map((r) => r.p50),
          1,
        ),
        spread(
          rs.map((r) => r.p99),
          1,
        ),
        ratio(name, (product, r) => product.rps / r.rps),
        spread(rs.map((r) => r.cpuUs)),
        ratio(name, (product, r) => r.cpuUs / product.cpuUs),
      ];
      console.log(`| ${name} | ${cells.join(' | ')} |`);
    }
  } finally {
    for (const s of servers) await s.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
