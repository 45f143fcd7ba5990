/** A run's summary: row counts, the run verdict, per-metric statistics, latency, cost and dimension breakdowns. */
import type { DimensionBreakdown, ItemResult, MetricSummary, PassRule, RunMetricSpec, RunSummary } from './run.types.js';
import { summarizeTrials } from './trials.js';
import { histogram, isScore, mean, median, nearestRank, populationStd, rate, reportedScore, roundNano, sortAscending } from './stats.js';

// Bound once: global lookups are slow inside jest's sandbox and this runs per row.
const { hasOwn } = Object;

/** Rows counted toward a pass rate: errored rows by the rule, then rows with a verdict. */
export function countRows(items: readonly ItemResult[], rule: PassRule): { passed: number; failed: number } {
  let passed = 0;
  let failed = 0;
  for (const item of items) {
    if (item.status === 'error') {
      if (rule.errors_fail) failed++;
    } else if (item.passed === true) passed++;
    else if (item.passed === false) failed++;
  }
  return { passed, failed };
}

export function summarizeMetric(items: readonly ItemResult[], metric: RunMetricSpec): MetricSummary {
  const values: number[] = [];
  const raw: number[] = [];
  let normalized = true;
  let errors = 0;
  let passed = 0;
  let failed = 0;
  for (const item of items) {
    const entry = hasOwn(item.scores, metric.name) ? item.scores[metric.name] : undefined;
    if (entry === undefined) {
      // A failed call never reached the metric: that is an error of the metric too.
      if (item.status === 'error') errors++;
      continue;
    }
    const value = reportedScore(entry);
    if (value !== null && isScore(entry.score)) {
      values.push(value);
      raw.push(entry.score);
      // A metric whose "normalised" value leaves 0..1 (an unbounded higher-is-better count such as length) has no scale.
      if (!isScore(entry.normalized) || entry.normalized < 0 || entry.normalized > 1) normalized = false;
    } else if (entry.error) errors++;
    if (entry.passed === true) passed++;
    else if (entry.passed === false) failed++;
  }
  const sorted = sortAscending(values);
  const centre = mean(sorted);
  const passRate = rate(passed, failed);
  return {
    name: metric.name,
    scored: sorted.length,
    errors,
    scale: normalized && sorted.length > 0 ? 'normalized' : 'raw',
    raw_mean: mean(raw),
    mean: centre,
    median: median(sorted),
    p90: nearestRank(sorted, 0.9),
    min: sorted.length > 0 ? sorted[0] : null,
    max: sorted.length > 0 ? sorted[sorted.length - 1] : null,
    std: centre === null ? null : populationStd(sorted, centre),
    pass_rate: passRate,
    passed,
    failed,
    histogram: histogram(sorted),
    meets_min_pass_rate: metric.min_pass_rate === null ? null : passRate !== null && passRate >= metric.min_pass_rate,
  };
}

/** Two decimals, or more when two decimals would print a value below its threshold as equal to it. */
function formatPair(value: number, threshold: number): [string, string] {
  let digits = 2;
  while (digits < 6 && value.toFixed(digits) === threshold.toFixed(digits)) digits++;
  return [value.toFixed(digits), threshold.toFixed(digits)];
}

function dimensionNamesOf(items: readonly ItemResult[]): string[] {
  const names = new Set<string>();
  for (const item of items) for (const name of Object.keys(item.dimensions ?? {})) names.add(name);
  return [...names].sort();
}

function breakdown(items: readonly ItemResult[], dimension: string, metrics: readonly RunMetricSpec[], rule: PassRule): DimensionBreakdown {
  const groups = new Map<string | null, ItemResult[]>();
  for (const item of items) {
    const dims = item.dimensions;
    // Own keys only: a dimension named like an Object.prototype member must not read the prototype.
    const value = dims !== undefined && hasOwn(dims, dimension) ? (dims[dimension] ?? null) : null;
    const group = groups.get(value);
    if (group) group.push(item);
    else groups.set(value, [item]);
  }
  const keys = [...groups.keys()].filter((k): k is string => k !== null).sort();
  const ordered: Array<string | null> = groups.has(null) ? [...keys, null] : keys;
  return {
    dimension,
    values: ordered.map((value) => {
      const group = groups.get(value) ?? [];
      const counted = countRows(group, rule);
      const perMetric: Record<string, { mean: number | null; pass_rate: number | null }> = {};
      for (const metric of metrics) {
        const s = summarizeMetric(group, metric);
        perMetric[metric.name] = { mean: s.mean, pass_rate: s.pass_rate };
      }
      return { value, rows: group.length, pass_rate: rate(counted.passed, counted.failed), metrics: perMetric };
    }),
  };
}

export function summarize(items: ItemResult[], metrics: RunMetricSpec[], rule: PassRule, dimensionNames?: string[]): RunSummary {
  let completed = 0;
  let errored = 0;
  let cost = 0;
  const latencies: number[] = [];
  for (const item of items) {
    if (item.status === 'done') completed++;
    else if (item.status === 'error') errored++;
    if (isScore(item.latency_ms)) latencies.push(item.latency_ms);
    if (isScore(item.cost_usd)) cost += item.cost_usd;
  }
  const counted = countRows(items, rule);
  const passRate = rate(counted.passed, counted.failed);
  const metricSummaries = metrics.map((metric) => summarizeMetric(items, metric));

  const reasons: string[] = [];
  if (passRate !== null) {
    if (passRate < rule.min_pass_rate) {
      const [value, threshold] = formatPair(passRate, rule.min_pass_rate);
      reasons.push(`row pass rate ${value} is below ${threshold}`);
    }
    metrics.forEach((metric, i) => {
      const summary = metricSummaries[i];
      if (metric.min_pass_rate === null || summary.meets_min_pass_rate !== false) return;
      if (summary.pass_rate === null) {
        reasons.push(`metric ${metric.name} has no verdicts to meet its ${metric.min_pass_rate.toFixed(2)}`);
      } else {
        const [value, threshold] = formatPair(summary.pass_rate, metric.min_pass_rate);
        reasons.push(`metric ${metric.name} passes on ${value} of rows, below its ${threshold}`);
      }
    });
  }

  const sortedLatency = sortAscending(latencies);
  return {
    rows: items.length,
    completed,
    errored,
    passed_rows: counted.passed,
    failed_rows: counted.failed,
    pass_rate: passRate,
    passed: passRate === null ? null : reasons.length === 0,
    reasons,
    latency_ms: {
      mean: mean(sortedLatency),
      p50: nearestRank(sortedLatency, 0.5),
      p90: nearestRank(sortedLatency, 0.9),
      p99: nearestRank(sortedLatency, 0.99),
    },
    cost_usd_total: roundNano(cost),
    metrics: metricSummaries,
    by_dimension: (dimensionNames ?? dimensionNamesOf(items)).map((name) => breakdown(items, name, metrics, rule)),
    trials: summarizeTrials(items, metrics, rule),
  };
}
