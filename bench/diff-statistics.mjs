// The diff's statistics at scale, in-process (the library GET /runs/diff calls after loading the
// items): two runs of BENCH_STATS_ROWS rows (default 10,000) with three metrics (a binary one, a
// 0..1 score, latency) and two dimensions of 5 and 20 values, timed over the diff alone and the
// diff plus its statistics (median of 5). Each comparison bootstraps 2,000 resamples.
//
//   npm run build && node bench/diff-statistics.mjs
import { diffStatistics } from '#libs/evaluation/runs/diff-statistics.js';
import { diffRows } from '#libs/evaluation/runs/diff.js';

const rows = Number(process.env.BENCH_STATS_ROWS ?? 10_000);
const metrics = [
  { name: 'exact_match', better: 'higher', gating: true, min_pass_rate: null },
  { name: 'judge', better: 'higher', gating: true, min_pass_rate: null },
  { name: 'latency', better: 'lower', gating: false, min_pass_rate: null },
];
let state = 11;
const random = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
const dimensions = new Map();
const run = (shift) =>
  Array.from({ length: rows }, (_, i) => {
    const exact = random() < 0.8 - shift ? 1 : 0;
    const judge = Math.min(1, Math.max(0, 0.7 - shift + (random() - 0.5) / 2));
    const latency = 400 + random() * 800;
    const rowId = `row-${i}`;
    dimensions.set(rowId, { topic: `topic_${i % 5}`, intent: `intent_${i % 20}` });
    return {
      row_id: rowId,
      repetition: 0,
      status: 'done',
      output: 'x',
      latency_ms: latency,
      cost_usd: null,
      error: null,
      passed: exact === 1 && judge >= 0.5,
      scores: {
        exact_match: { score: exact, passed: exact === 1 },
        judge: { score: judge, normalized: judge, passed: judge >= 0.5 },
        latency: { score: latency, passed: null },
      },
    };
  });
const base = run(0);
const candidate = run(0.02);

const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const diffTimes = [];
const statsTimes = [];
let comparisons = 0;
for (let i = 0; i < 5; i++) {
  const t0 = performance.now();
  const diff = diffRows(base, candidate, metrics);
  const t1 = performance.now();
  const stats = diffStatistics(diff.rows, metrics, { seedKey: 'bench', dimensionsOf: (id) => dimensions.get(id) });
  const t2 = performance.now();
  diffTimes.push(t1 - t0);
  statsTimes.push(t2 - t1);
  comparisons =
    1 +
    stats.metrics.length +
    stats.by_dimension.reduce((n, d) => n + d.values.length * (1 + d.values[0].metrics.length), 0);
}
console.log(
  JSON.stringify({
    rows,
    comparisons,
    diff_ms: Math.round(median(diffTimes)),
    statistics_ms: Math.round(median(statsTimes)),
  }),
);
