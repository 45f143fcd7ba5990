// Enrichment and topology of one very large agent trace, in-process, as the enrichment job holds
// it: BENCH_SPANS spans (default 20,000) of one trace, each row's data parsed from its JSON text as
// the database driver hands it over (a 2 KB prompt, a 1 KB answer, kept attributes), arriving in
// pages of 5,000 rows. Two ways of holding the trace, each in a process of its own so that peak
// RSS is its own:
//
//   rows     every row of the trace kept as read, then enrichTrace (how the job held a trace);
//   compact  each page's rows made compactSpan records as they arrive, then enrichTrace (how it
//            holds one now), and the topology's records of the same trace.
//
// Reported per way: the peak RSS growth over the process at rest (getrusage maxRSS less the RSS
// before the first page) and the time from the first page to the figures, each against its stated
// limit as a ratio (≤ 1 is within it). Exits 1 when the compact way passes a limit.
//
//   npm run build && node bench/large-trace.mjs
//
// BENCH_SPANS (default 20000), BENCH_WAYS (default rows,compact).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { compactSpan, enrichTrace } from '#libs/traces/enrichment.js';
import { buildTopology } from '#libs/traces/topology.js';

const SPANS = Number(process.env.BENCH_SPANS ?? 20_000);
const PAGE = 5000;
/** Stated limits of the compact way, per 20,000 spans (scaled linearly with BENCH_SPANS) */
const LIMIT_RSS_MB = 160 * (SPANS / 20_000);
const LIMIT_SECONDS = 3 * (SPANS / 20_000);
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const T0 = Date.UTC(2026, 10, 29, 9, 0, 0);

/** Row `i` of the trace as JSON text: the agent tree of test/utils/large-trace.ts, payloads of a real agent's size. */
function rowText(i) {
  const helper = Math.floor(i / 200);
  const kind = i === 0 ? 'agent' : i % 200 === 1 ? 'agent' : i % 2 ? 'llm' : 'tool';
  const parent = i === 0 ? null : kind === 'agent' ? 'span-0' : `span-${helper * 200 + 1}`;
  const tool = ['search_flights', 'lookup_order', 'get_weather'][i % 3];
  return JSON.stringify({
    trace_id: TRACE,
    span_id: `span-${i}`,
    parent_span_id: parent,
    session_id: 'conv-1',
    user_id: null,
    name: kind === 'agent' ? `helper-${helper}` : kind === 'llm' ? 'chat gpt-4o-mini' : tool,
    kind,
    start_time: new Date(T0 + i).toISOString(),
    end_time: new Date(T0 + i + 1).toISOString(),
    duration_ms: 1,
    status: i % 997 === 0 ? 'error' : 'ok',
    error: null,
    input: [{ role: 'user', parts: [{ type: 'text', content: `step ${i} ${'p'.repeat(2000)}` }] }],
    output: [{ role: 'assistant', parts: [{ type: 'text', content: `answer ${i} ${'a'.repeat(1000)}` }] }],
    model: kind === 'llm' ? 'gpt-4o-mini' : null,
    tokens_input: kind === 'llm' ? 500 : null,
    tokens_output: kind === 'llm' ? 80 : null,
    tokens_total: null,
    cost: null,
    tool_calls: kind === 'agent' ? [] : [{ name: tool, arguments: { q: i }, id: `call_${i}` }],
    retrieved_documents: [],
    service_name: 'agent-api',
    convention: 'genai',
    attributes: { 'gen_ai.provider.name': 'openai', 'gen_ai.request.temperature': 0.2, 'app.release': '2026.11' },
  });
}

/** The trace's rows in pages, each row parsed from its own text (new strings, as from the driver). */
function* pages() {
  for (let from = 0; from < SPANS; from += PAGE)
    yield Array.from({ length: Math.min(PAGE, SPANS - from) }, (_, k) => JSON.parse(rowText(from + k)));
}

function measure(way) {
  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const held = [];
  const topology = [];
  for (const page of pages())
    for (const row of page) {
      if (way === 'rows') held.push(row);
      else {
        const span = compactSpan(row);
        held.push(span);
        topology.push({
          trace_id: span.trace_id,
          span_id: span.span_id,
          parent_span_id: span.parent_span_id,
          name: span.name,
          kind: span.kind,
          duration_ms: span.duration_ms,
          status: span.status,
          service_name: row.service_name,
        });
      }
    }
  const enrichment = enrichTrace(held);
  const graph = way === 'compact' ? buildTopology(topology) : null;
  const seconds = (performance.now() - started) / 1000;
  const peakMb = (process.resourceUsage().maxRSS * 1024 - rssBefore) / 2 ** 20;
  return {
    way,
    spans: enrichment.span_count,
    max_depth: enrichment.max_depth,
    llm_calls: enrichment.llm_calls,
    nodes: graph?.nodes.length ?? null,
    peak_rss_growth_mb: Math.round(peakMb),
    seconds: Number(seconds.toFixed(2)),
  };
}

const self = fileURLToPath(import.meta.url);
const mode = process.argv[2];
if (mode) {
  process.stdout.write(JSON.stringify(measure(mode)));
} else {
  let failed = false;
  for (const way of (process.env.BENCH_WAYS ?? 'rows,compact').split(',')) {
    const child = spawnSync(process.execPath, ['--expose-gc', self, way], { encoding: 'utf8', env: process.env });
    if (child.status !== 0) throw new Error(`${way}: ${child.stderr}`);
    const r = JSON.parse(child.stdout);
    const rssRatio = r.peak_rss_growth_mb / LIMIT_RSS_MB;
    const timeRatio = r.seconds / LIMIT_SECONDS;
    if (way === 'compact' && (rssRatio > 1 || timeRatio > 1)) failed = true;
    console.log(
      `${way.padEnd(8)} ${r.spans} spans, depth ${r.max_depth}: peak RSS +${r.peak_rss_growth_mb} MB ` +
        `(${rssRatio.toFixed(2)} of ${LIMIT_RSS_MB} MB), ${r.seconds} s (${timeRatio.toFixed(2)} of ${LIMIT_SECONDS} s)`,
    );
  }
  process.exitCode = failed ? 1 : 0;
}
