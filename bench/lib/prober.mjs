// A client that asks `url` one request at a time, `everyMs` apart, in a process of its own, and
// reports how long the answers took: how long the service it asks stops answering while another
// piece of work runs (an embedded engine holding the event loop shows here). Started by
// `probeDuring` (bench/lib/processes.mjs); on the parent's 'stop' message it sends
// `{ count, medianMs, maxMs, failed }` and exits.
//
//   node bench/lib/prober.mjs <url> <everyMs>
import { median } from './processes.mjs';

const [url, everyArg] = process.argv.slice(2);
const everyMs = Number(everyArg ?? 50);
const times = [];
let failed = 0;
let stopping = false;

process.on('message', (message) => {
  if (message === 'stop') stopping = true;
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
while (!stopping) {
  const t0 = performance.now();
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(120_000) });
    await res.arrayBuffer();
    if (!res.ok) failed++;
  } catch {
    failed++;
  }
  times.push(performance.now() - t0);
  await sleep(everyMs);
}
process.send({ count: times.length, medianMs: median(times) ?? 0, maxMs: Math.max(0, ...times), failed }, () =>
  process.exit(0),
);
