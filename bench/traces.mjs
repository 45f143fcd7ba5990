// Trace landing at scale, through the real HTTP API: an OTLP/JSON file of 100,000 OpenInference
// spans (10 per trace) is uploaded and landed by the queued job into a new trace dataset; the
// landing's spans per second are measured beside a plain COPY of the same normalised span rows
// into a bare jsonb table (bench/lib/plain-copy.mjs, a process of its own) after each round (the
// issue's bar: at least half the COPY rate), three rounds, with the process's peak RSS while
// landing (the file is read as a stream, so memory stays flat as files grow).
//
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/traces.mjs
//   npm run build && node bench/traces.mjs            # embedded PGlite (twin: a fresh PGlite)
//
// Before each round it prints the service's memory at rest (process.memoryUsage(): rss, V8 heap
// used and reserved, external, array buffers), as found and after a full GC.
//
// BENCH_SPANS (default 100000), BENCH_ROUNDS (3), BENCH_COPY=0 (no COPY twin). Creates its own database (or data directory) and
// removes it afterwards.
import { createWriteStream, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DataSource } from 'typeorm';
import { spread } from './lib/processes.mjs';
import { curlPostFile } from './lib/uploads.mjs';
import {
  asNpmStartRuns,
  formatSplit,
  memorySplit,
  plainCopy,
  withBenchApp,
  withDatabase,
  withPeakRss,
} from './support.mjs';

asNpmStartRuns();

const spans = Number(process.env.BENCH_SPANS ?? 100_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const twin = process.env.BENCH_COPY !== '0';
const PER_TRACE = 10;
const hex = (n, width) => n.toString(16).padStart(width, '0');
const str = (key, value) => ({ key, value: { stringValue: value } });
const int = (key, value) => ({ key, value: { intValue: String(value) } });

/** One OTLP/JSON ExportTraceServiceRequest, written as a stream: agent root, llm, tool, retriever children. */
async function writeOtlp(path) {
  async function* chunks() {
    yield '{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"support-bot"}}]},"scopeSpans":[{"scope":{"name":"openinference.instrumentation","version":"1.0"},"spans":[';
    const t0 = 1_793_000_000_000n * 1_000_000n;
    for (let i = 0; i < spans; i++) {
      const trace = Math.floor(i / PER_TRACE);
      const j = i % PER_TRACE;
      const start = t0 + BigInt(trace) * 60_000_000_000n + BigInt(j) * 100_000_000n;
      const kind = j === 0 ? 'AGENT' : j % 3 === 1 ? 'LLM' : j % 3 === 2 ? 'TOOL' : 'RETRIEVER';
      const attributes = [
        str('openinference.span.kind', kind),
        str('session.id', `session-${trace % 1000}`),
        str('input.value', `Question ${trace} step ${j}: where is my order ${trace}?`),
        str('output.value', `Answer for step ${j}`),
      ];
      if (kind === 'LLM')
        attributes.push(
          str('llm.model_name', 'gpt-4o-mini'),
          int('llm.token_count.prompt', 100 + j),
          int('llm.token_count.completion', 20),
          int('llm.token_count.total', 120 + j),
        );
      if (kind === 'TOOL')
        attributes.push(str('tool.name', `tool_${j % 4}`), str('tool.parameters', `{"order":${trace}}`));
      const span = {
        traceId: hex(trace + 1, 32),
        spanId: hex(i + 1, 16),
        ...(j ? { parentSpanId: hex(trace * PER_TRACE + 1, 16) } : {}),
        name: j === 0 ? 'support-agent' : `${kind.toLowerCase()}-${j % 4}`,
        kind: 1,
        startTimeUnixNano: String(start),
        endTimeUnixNano: String(start + BigInt(50 + ((i * 7919) % 400)) * 1_000_000n),
        attributes,
        status: { code: i % 97 === 0 ? 2 : 1, ...(i % 97 === 0 ? { message: 'tool failed' } : {}) },
      };
      yield `${i ? ',' : ''}${JSON.stringify(span)}`;
    }
    yield ']}]}]}';
  }
  await pipeline(Readable.from(chunks()), createWriteStream(path));
}

async function waitFor(http, auth, path, done) {
  for (;;) {
    const body = (await http.get(path).set(auth).expect(200)).body;
    if (done(body)) return body;
    await new Promise((r) => setTimeout(r, 200));
  }
}

await withDatabase((databaseUrl) =>
  withBenchApp(
    databaseUrl,
    { UPLOAD_MAX_BYTES: String(2 * 1024 * 1024 * 1024) },
    async ({ app, base, http, token, auth, ws, dataDir, mode }) => {
      const file = join(dataDir, 'spans.json');
      await writeOtlp(file);
      const size = statSync(file).size;
      const upload = await curlPostFile(`${base}/traces/uploads?workspace_id=${ws}`, token, file);
      const rates = [];
      const ratios = [];
      const peaks = [];
      for (let round = 0; round < rounds; round++) {
        // The service at rest before the round, as found and after a full collection: a landing that
        // kept anything would raise the collected heap (or external memory) from round to round.
        const found = await memorySplit();
        const held = await memorySplit(true);
        console.log(
          `[${mode}] at rest before round ${round + 1}: ${formatSplit(found)}; after a GC ${formatSplit(held)}`,
        );
        const t0 = performance.now();
        const {
          result: run,
          peak,
          before,
        } = await withPeakRss(async () => {
          const started = (
            await http
              .post('/traces/land')
              .set(auth)
              .send({ workspace_id: ws, upload_id: upload.id, dataset_name: `bench traces ${round + 1}` })
              .expect(202)
          ).body;
          return waitFor(http, auth, `/traces/runs/${started.id}`, (b) => ['succeeded', 'failed'].includes(b.state));
        });
        const landMs = performance.now() - t0;
        if (run.state !== 'succeeded') throw new Error(`the landing failed: ${JSON.stringify(run.error)}`);
        const rate = run.counts.landed / (landMs / 1000);
        const t1 = performance.now();
        const enrichment = await waitFor(
          http,
          auth,
          `/datasets/${run.dataset_id}/versions/${run.version_id}/trace-enrichment`,
          (b) => ['succeeded', 'failed'].includes(b.state),
        );
        const enrichS = (performance.now() - t1) / 1000;
        const copy = twin ? await plainCopy(databaseUrl ?? app.get(DataSource), run.dataset_id) : null;
        const copyRate = copy ? copy.rows / (copy.ms / 1000) : NaN;
        rates.push(rate);
        if (copy) ratios.push(rate / copyRate);
        peaks.push(peak / 1e6);
        console.log(
          `[${mode}] round ${round + 1}: landing ${run.counts.landed} spans (${run.traces} traces) from a ${(size / 1e6).toFixed(0)} MB OTLP/JSON file: ${(landMs / 1000).toFixed(1)} s, ${Math.round(rate)} spans/s;` +
            (copy
              ? ` plain COPY of the ${copy.rows} normalised rows ${(copy.ms / 1000).toFixed(1)} s, ${Math.round(copyRate)} rows/s; landing = ${(rate / copyRate).toFixed(2)} of the COPY rate;`
              : '') +
            ` peak rss ${Math.round(peak / 1e6)} MB (${Math.round(before / 1e6)} MB before); enrichment after it ${enrichS.toFixed(1)} s (${enrichment.state})`,
        );
        if (round === 0) {
          const t2 = performance.now();
          const graph = (
            await http.get(`/datasets/${run.dataset_id}/versions/${run.version_id}/topology`).set(auth).expect(200)
          ).body;
          console.log(
            `  topology of ${graph.span_count} spans: ${((performance.now() - t2) / 1000).toFixed(1)} s, ${graph.nodes.length} nodes, ${graph.edges.length} edges`,
          );
        }
      }
      console.log(
        `[${mode}] ${rounds} rounds, min / median / max: ${spread(rates)} spans/s;${ratios.length ? ` landing / COPY rate ${spread(ratios, 2)};` : ''} peak rss ${spread(peaks)} MB`,
      );
    },
  ),
);
