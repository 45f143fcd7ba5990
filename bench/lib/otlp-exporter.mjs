// An OTLP/HTTP exporter for the benchmarks, as a process of its own:
//
//   node bench/lib/otlp-exporter.mjs <url> <key> <seconds> <index>
//
// It sends batches of BATCH spans (default 512; binary protobuf, as the OpenTelemetry proto
// exporter does) to <url> with the API key for <seconds>, each batch retried until acknowledged:
// after Retry-After on 429/503, after 200 ms when the connection is refused (the service killed).
// It writes a line per event on stdout: `A <epoch ms> <spans> <latency ms> <batch>` for an
// acknowledgement, `R <status>` for a refusal, `E` for a failed connection.
//
// A batch holds BATCH / 8 traces of 8 spans: an agent root span, then LLM and tool spans under it.
// Trace ids are random-looking (so OpenTelemetry's consistent sampling, which reads the id's last
// 56 bits, takes its share) and deterministic: `traceIdOf(exporter, batch, k)`. One trace in five
// answers "Sorry, I cannot help" at its root, the others "It ships tomorrow": `isRefusal`.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const BATCH = Number(process.env.BATCH ?? 512);
/** Spans per trace. */
export const SPANS_PER_TRACE = 8;
/** The service.name of every span: the live dataset it lands in. */
export const SERVICE_NAME = 'bench-support-bot';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The trace id (32 hex) of trace `k` of batch `batch` (from 1) of exporter `exporter` (from 0): the first 128 bits of SHA-256 of `exporter:batch:k`. */
export function traceIdOf(exporter, batch, k) {
  return createHash('sha256').update(`${exporter}:${batch}:${k}`).digest('hex').slice(0, 32);
}

/** Whether that trace's root span answers with a refusal (one in five): a metric looking for "ships" fails it. */
export const isRefusal = (exporter, batch, k) => (batch * (BATCH / SPANS_PER_TRACE) + k + exporter) % 5 === 0;

/** The root span's output.value of that trace. */
export const answerOf = (exporter, batch, k) =>
  isRefusal(exporter, batch, k) ? 'Sorry, I cannot help with that order.' : 'It ships tomorrow.';

let Request;

/** The body of batch `batch` of exporter `index`: an ExportTraceServiceRequest, encoded. */
export function batchBody(index, batch) {
  Request ??= createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root.js')
    .opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
  const hex = (n, width) => n.toString(16).padStart(width, '0');
  const str = (key, value) => ({ key, value: { stringValue: value } });
  const now = BigInt(Date.now()) * 1_000_000n;
  const spans = [];
  for (let i = 0; i < BATCH; i++) {
    const k = Math.floor(i / SPANS_PER_TRACE);
    const traceId = traceIdOf(index, batch, k);
    const j = i % SPANS_PER_TRACE;
    spans.push({
      traceId: Buffer.from(traceId, 'hex'),
      spanId: Buffer.from(hex(index * 1e12 + batch * BATCH + i + 1, 16), 'hex'),
      ...(j ? { parentSpanId: Buffer.from(hex(index * 1e12 + batch * BATCH + i - j + 1, 16), 'hex') } : {}),
      name: j ? (j % 2 ? 'ChatCompletion' : 'lookup_order') : 'support-agent',
      kind: 1,
      startTimeUnixNano: String(now + BigInt(j) * 1_000_000n),
      endTimeUnixNano: String(now + BigInt(j + 40) * 1_000_000n),
      attributes: [
        str('openinference.span.kind', j ? (j % 2 ? 'LLM' : 'TOOL') : 'AGENT'),
        str('session.id', `s-${(batch * 64 + k) % 500}`),
        // The trace id in the question: a judge's prompt names the trace it grades.
        str('input.value', `Where is order ${traceId}? (step ${j})`),
        str('output.value', j ? `Order found (step ${j})` : answerOf(index, batch, k)),
        ...(j % 2
          ? [
              str('llm.model_name', 'gpt-4o-mini'),
              { key: 'llm.token_count.prompt', value: { intValue: 120 } },
              { key: 'llm.token_count.completion', value: { intValue: 24 } },
            ]
          : []),
      ],
    });
  }
  return Request.encode(
    Request.fromObject({
      resourceSpans: [
        {
          resource: { attributes: [str('service.name', SERVICE_NAME)] },
          scopeSpans: [{ scope: { name: 'bench' }, spans }],
        },
      ],
    }),
  ).finish();
}

/** One exporter: batches until `seconds` are over, each retried until acknowledged; a line per event. */
export async function exporter(url, key, seconds, index) {
  const deadline = Date.now() + seconds * 1000;
  let batch = 0;
  while (Date.now() < deadline) {
    batch++;
    const body = batchBody(index, batch);
    for (;;) {
      const sent = performance.now();
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-protobuf' },
          body,
          signal: AbortSignal.timeout(30_000),
        });
        await res.arrayBuffer();
        if (res.status === 200) {
          process.stdout.write(`A ${Date.now()} ${BATCH} ${(performance.now() - sent).toFixed(2)} ${batch}\n`);
          break;
        }
        process.stdout.write(`R ${res.status}\n`);
        await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
      } catch {
        // The service is down (killed): the batch is sent again once it is back.
        process.stdout.write('E\n');
        await sleep(200);
      }
    }
  }
}

/**
 * Starts `count` exporter processes sending to `url` for `seconds`; answers `{ acks, counts,
 * done }`: `acks` fills with `{ exporter, batch, at, spans, ms }` as they are acknowledged,
 * `counts` with `refused` (429/503) and `failed` (no connection), `done` settles when all exited.
 */
export function startExporters(url, key, seconds, count) {
  const acks = [];
  const counts = { refused: 0, failed: 0 };
  const exited = Array.from({ length: count }, (_, index) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), url, key, String(seconds), String(index)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let rest = '';
    child.stdout.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        const [kind, at, spans, ms, batch] = line.split(' ');
        if (kind === 'A')
          acks.push({ exporter: index, batch: Number(batch), at: Number(at), spans: Number(spans), ms: Number(ms) });
        else if (kind === 'R') counts.refused++;
        else if (kind === 'E') counts.failed++;
      }
    });
    return new Promise((resolve) => child.on('exit', resolve));
  });
  return { acks, counts, done: Promise.all(exited) };
}

if (process.argv[1] === fileURLToPath(import.meta.url))
  await exporter(process.argv[2], process.argv[3], Number(process.argv[4]), Number(process.argv[5]));
