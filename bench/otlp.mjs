// The OTLP/HTTP receiver under load, through the real service in its own process (as `npm start`
// runs it): EXPORTERS exporter processes (bench/lib/otlp-exporter.mjs) each send batches of 512
// spans (binary protobuf, as the OpenTelemetry proto exporter does) to POST /v1/traces for SECONDS,
// retrying a batch on 429/503 (after Retry-After) and on a refused connection, as exporters do. Halfway through, the service
// is killed with SIGKILL and started again. Measured in the same run:
// - sustained spans/s landed, beside a plain COPY of the same rows into a bare jsonb table;
// - acknowledgement latency (p50, p99) as the exporters see it;
// - freshness: acknowledged to landed (p50, p99), from the exporters' acknowledgement times and the
//   stream's landed count (landing is first-in first-out);
// - the service's RSS in 10-second windows (flat over the minute, or not);
// - after the kill and the restart: spans landed = distinct spans acknowledged.
//
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/otlp.mjs
//   npm run build && node bench/otlp.mjs         # embedded PGlite (no COPY comparison)
//
// EXPORTERS (default 4), SECONDS (default 60), BATCH (default 512), KILL (default 1: SIGKILL halfway; 0: none).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { plainCopy, withDatabase } from './support.mjs';
import { BATCH, SERVICE_NAME, startExporters } from './lib/otlp-exporter.mjs';
import { serviceEnv, serviceNodeFlags } from './lib/processes.mjs';

const EXPORTERS = Number(process.env.EXPORTERS ?? 4);
const SECONDS = Number(process.env.SECONDS ?? 60);
const KILL = process.env.KILL !== '0';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted, p) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;

await main();

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function rssOf(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
  } catch {
    return 0;
  }
}

async function main() {
  const root = fileURLToPath(new URL('..', import.meta.url));
  await withDatabase(async (databaseUrl) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ews-bench-otlp-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      ...Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !['DATABASE_URL', 'REDIS_URL'].includes(name)),
      ),
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_EMAIL: 'bench@example.com',
      ADMIN_PASSWORD: 'bench-password-1',
      LOG_LEVEL: 'warn',
    };
    let service;
    const boot = async () => {
      service = spawn(process.execPath, [...serviceNodeFlags, 'dist/src/main.js'], {
        cwd: root,
        env: { ...serviceEnv, ...env },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      for (let i = 0; i < 600; i++) {
        if (
          (await fetch(`${base}/ready`)
            .then((r) => r.status)
            .catch(() => 0)) === 200
        )
          return;
        await sleep(100);
      }
      throw new Error('the service did not become ready');
    };
    const call = async (method, path, auth, body) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { ...(auth ?? {}), ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = await res.json().catch(() => null);
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    try {
      await boot();
      const token = (
        await call('POST', '/auth/token', undefined, { email: 'bench@example.com', password: 'bench-password-1' })
      ).access_token;
      const auth = { authorization: `Bearer ${token}` };
      const ws = (await call('POST', '/workspaces', auth, { name: 'bench' })).id;
      const key = (await call('POST', `/workspaces/${ws}/api-keys`, auth, { name: 'bench-exporters', role: 'member' }))
        .key;
      const keyAuth = { authorization: `Bearer ${key}` };

      const t0 = Date.now();
      const { acks, counts, done } = startExporters(`${base}/v1/traces`, key, SECONDS, EXPORTERS);

      // The stream's landed count over time, and the service's RSS.
      let datasetId = null;
      const landedAt = [];
      const rss = [];
      let killedAt = null;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          rss.push({ at: Date.now(), bytes: rssOf(service.pid) });
          try {
            if (!datasetId)
              datasetId =
                (await call('GET', `/datasets?workspace_id=${ws}&q=${SERVICE_NAME}`, keyAuth)).items[0]?.id ?? null;
            if (datasetId) {
              const live = await call('GET', `/traces/datasets/${datasetId}/live`, keyAuth);
              if (live.ingest_run_id) {
                const run = await call('GET', `/traces/runs/${live.ingest_run_id}`, keyAuth);
                landedAt.push({
                  at: Date.now(),
                  landed: run.counts.landed + run.counts.deduplicated,
                  pending: run.counts.pending,
                });
              }
            }
          } catch {
            // down while killed
          }
          await sleep(100);
        }
      })();
      if (KILL) {
        await sleep((SECONDS * 1000) / 2);
        killedAt = Date.now();
        service.kill('SIGKILL');
        await new Promise((resolve) => service.once('exit', resolve));
        await boot();
        console.log(
          `  SIGKILL at ${((killedAt - t0) / 1000).toFixed(1)} s; back and ready ${((Date.now() - killedAt) / 1000).toFixed(1)} s later`,
        );
      }
      await done;
      const sentUntil = Date.now();
      // Everything acknowledged lands.
      for (;;) {
        const last = landedAt.at(-1);
        if (last && last.at > sentUntil && last.pending === 0) break;
        await sleep(200);
      }
      sampling = false;
      await sampler;
      const lastLanded = landedAt.find((s) => s.pending === 0 && s.at > sentUntil).at;

      const acked = acks.reduce((n, a) => n + a.spans, 0);
      const live = await call('GET', `/traces/datasets/${datasetId}/live`, keyAuth);
      const run = await call('GET', `/traces/runs/${live.ingest_run_id}`, keyAuth);
      const versions = (await call('GET', `/datasets/${datasetId}/versions`, keyAuth)).items;
      const rows = versions.reduce((n, v) => Math.max(n, v.row_count), 0);
      const latencies = acks.map((a) => a.ms).sort((a, b) => a - b);
      // Freshness: the k-th acknowledged span is landed when the landed count first reaches k.
      const ordered = [...acks].sort((a, b) => a.at - b.at);
      const fresh = [];
      let cumulative = 0;
      let i = 0;
      for (const ack of ordered) {
        cumulative += ack.spans;
        while (i < landedAt.length && landedAt[i].landed < cumulative) i++;
        if (i < landedAt.length) fresh.push(Math.max(0, landedAt[i].at - ack.at));
      }
      fresh.sort((a, b) => a - b);
      const wall = (lastLanded - t0) / 1000;
      const rate = run.counts.landed / wall;
      const mode = databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
      console.log(
        `[${mode}] ${EXPORTERS} exporter processes, batches of ${BATCH} spans, ${SECONDS} s${KILL ? ', SIGKILL and restart halfway' : ''}`,
      );
      console.log(
        `  acknowledged ${acked} spans in ${acks.length} exports (${counts.refused} answered 429/503 and retried, ${counts.failed} failed to connect and retried); landed ${run.counts.landed}, deduplicated ${run.counts.deduplicated}, dropped ${run.counts.dropped}; rows in the newest version ${rows}`,
      );
      console.log(
        `  landed = acknowledged: ${run.counts.landed === acked ? 'yes' : `NO (${run.counts.landed} of ${acked})`}`,
      );
      console.log(
        `  sustained ${Math.round(rate)} spans/s landed (${wall.toFixed(1)} s from the first export to the last span landed)`,
      );
      console.log(
        `  acknowledgement latency p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms; freshness (acknowledged to landed) p50 ${percentile(fresh, 50)} ms, p99 ${percentile(fresh, 99)} ms`,
      );
      const windows = [];
      for (let from = t0; from < sentUntil; from += 10_000) {
        const inWindow = rss.filter((s) => s.at >= from && s.at < from + 10_000 && s.bytes > 0);
        windows.push(inWindow.length ? Math.round(Math.max(...inWindow.map((s) => s.bytes)) / 1e6) : null);
      }
      console.log(`  service peak RSS per 10 s window (MB): ${windows.join(', ')}`);
      if (databaseUrl) {
        const copy = await plainCopy(databaseUrl, datasetId);
        const copyRate = copy.rows / (copy.ms / 1000);
        console.log(
          `  plain COPY of the ${copy.rows} landed rows: ${Math.round(copyRate)} rows/s; receiving = ${(rate / copyRate).toFixed(2)} of the COPY rate`,
        );
      }
    } finally {
      service?.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
