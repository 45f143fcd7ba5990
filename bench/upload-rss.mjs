// The service's memory during uploads, as users run it: `node <npm start's flags> dist/src/main.js`
// in a process of its own (a second start: the first, which creates the embedded data directory,
// is done and stopped beforehand), BENCH_ROUNDS=3 uploads of the same BENCH_UPLOAD_ROWS=100000-row
// CSV with curl, the service's resident set (VmRSS in /proc/<pid>/status) sampled every 20 ms from
// this process from the upload's start until BENCH_SETTLE_MS=10000 after its answer, so the index
// merge the upload queues counts too. Prints the RSS at rest before each upload, its peak, the
// upload's time, and min / median / max over the rounds (the aim, embedded: under 400 MB).
// Meanwhile a client in a process of its own asks GET /live every 50 ms (bench/lib/prober.mjs):
// the longest answer is the longest the service kept every request waiting (on the embedded
// database, a statement holding the engine, which runs on the service's thread).
//
//   npm run build && node bench/upload-rss.mjs          # embedded PGlite, the default
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/upload-rss.mjs
//
// Creates its own database (or data directory) and removes it afterwards.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeDuring, rssDuring, rssMb, spread } from './lib/processes.mjs';
import { api, EMAIL, PASSWORD, productEnv, startProduct } from './lib/service.mjs';
import { csvOf, curlUpload } from './lib/uploads.mjs';
import { withDatabase } from './support.mjs';

const rows = Number(process.env.BENCH_UPLOAD_ROWS ?? 100_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const settleMs = Number(process.env.BENCH_SETTLE_MS ?? 10_000);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

await withDatabase(async (databaseUrl) => {
  const mode = databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
  const dir = mkdtempSync(join(tmpdir(), 'ews-bench-rss-'));
  const env = productEnv(join(dir, 'data'), databaseUrl, { UPLOAD_MAX_ROWS: String(rows) });
  let service;
  try {
    const file = join(dir, 'upload.csv');
    writeFileSync(file, csvOf(rows));
    // The first start creates the data directory (and runs the migrations): not what users meet after it.
    service = await startProduct(env);
    const { access_token: token } = await api(service.url, 'POST', '/auth/token', undefined, {
      email: EMAIL,
      password: PASSWORD,
    });
    const ws = await api(service.url, 'POST', '/workspaces', token, { name: 'bench' });
    await service.stop();
    service = await startProduct(env);
    await sleep(2000);
    console.log(
      `${mode}: ${rounds} uploads of ${rows} CSV rows, the service as npm start runs it; node ${process.version}, ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}`,
    );
    const rests = [];
    const peaks = [];
    const times = [];
    const waits = [];
    for (let round = 0; round < rounds; round++) {
      const rest = rssMb(service.pid);
      const t0 = performance.now();
      const { probe, result: peak } = await probeDuring(`${service.url}/live`, 50, async () => {
        const sampled = await rssDuring(service.pid, 20, async () => {
          const dataset = await curlUpload(service.url, token, ws.id, file, `upload ${round + 1}`);
          if (dataset.latest_version.row_count !== rows)
            throw new Error(`the upload holds ${dataset.latest_version.row_count} rows`);
          times.push((performance.now() - t0) / 1000);
          await sleep(settleMs);
        });
        return sampled.peak;
      });
      rests.push(rest);
      peaks.push(peak);
      waits.push(probe.maxMs);
      console.log(
        `  round ${round + 1}: upload ${times[round].toFixed(2)} s; RSS at rest before it ${Math.round(rest)} MB, peak ${Math.round(peak)} MB; ` +
          `GET /live every 50 ms meanwhile: ${probe.count} answers, median ${probe.medianMs.toFixed(1)} ms, longest ${Math.round(probe.maxMs)} ms, ${probe.failed} failed`,
      );
    }
    console.log(
      `${mode}, min / median / max: upload ${spread(times, 2)} s; RSS at rest ${spread(rests)} MB; peak ${spread(peaks)} MB (aim, embedded: under 400 MB); ` +
        `longest /live answer ${spread(waits)} ms`,
    );
  } finally {
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
