/** A run's summary: row counts, the run verdict, per-metric statistics, latency, cost and dimension breakdowns. */
import type {
  DimensionBreakdown,
  ItemResult,
  MetricScore,
  MetricSummary,
  PassRule,
  RunMetricSpec,
  RunSummary,
} from './run.types.js';
import { byRow, TrialsAccumulator } from './trials.js';
import {
  histogram,
  isScore,
  mean,
  median,
  nearestRank,
  populationStd,
  rate,
  reportedScore,
  roundNano,
} from './stats.js';

// Bound once: global lookups are slow inside jest's sandbox and this runs per row.
const { hasOwn, keys: ownKeys } = Object;
const { isNaN: notANumber } = Number;

/** A verdict as a number: 1 passed, -1 failed, 0 none. */
type Verdict = 1 | -1 | 0;

/** One metric's running counts, and its value per item (NaN where the item has none). */
interface MetricTally {
  spec: RunMetricSpec;
  values: Float64Array;
  scored: number;
  /** Raw scores summed in item order (the mean of the raw scale). */
  rawSum: number;
  normalized: boolean;
  errors: number;
  passed: number;
  failed: number;
}

/** Counts of the items of one dimension value. */
interface GroupTally {
  rows: number;
  passed: number;
  failed: number;
  metricPassed: number[];
  metricFailed: number[];
}

/** One dimension: its values' group numbers (0 is "no value"), each item's group, and each group's counts (index 0 unused). */
interface DimensionTally {
  ids: Map<string, number>;
  groups: Uint32Array;
  tallies: GroupTally[];
}

/** How an item counts toward the row pass rate: errored rows by the rule, then rows with a verdict. */
function rowVerdictOf(item: ItemResult, rule: PassRule): Verdict {
  if (item.status === 'error') return rule.errors_fail ? -1 : 0;
  return item.passed === true ? 1 : item.passed === false ? -1 : 0;
}

function verdictOf(entry: MetricScore): Verdict {
  return entry.passed === true ? 1 : entry.passed === false ? -1 : 0;
}

function resized<T extends Float64Array | Uint32Array>(array: T, length: number): T {
  const next = new (array.constructor as new (n: number) => T)(length);
  next.set(array);
  return next;
}

/**
 * A run's summary over items fed one at a time, holding numbers, never items: counts and sums as
 * it goes, and per item one float per metric (its score; NaN for none), its latency and one group
 * number per dimension, for what needs every value (medians, percentiles, histograms, and means
 * summed in ascending order, as the summary always has). The items of one row (its repetitions)
 * must come one after another, as a run's items do in their order: the trials take a row at a time.
 */
export class SummaryAccumulator {
  private n = 0;
  private capacity: number;
  private completed = 0;
  private errored = 0;
  private cost = 0;
  private rowsPassed = 0;
  private rowsFailed = 0;
  private latencies: Float64Array;
  private latencyCount = 0;
  private readonly metrics: MetricTally[];
  private readonly dimensions = new Map<string, DimensionTally>();
  /** The item being added: its verdict per metric. */
  private readonly verdicts: Int8Array;
  private readonly trials: TrialsAccumulator;
  private row: ItemResult[] = [];

  constructor(
    specs: readonly RunMetricSpec[],
    private readonly rule: PassRule,
    /** Items to expect: the columns are sized for them at once (and grow past it). */
    expectedItems = 0,
  ) {
    this.capacity = Math.max(16, expectedItems);
    this.latencies = new Float64Array(this.capacity);
    this.metrics = specs.map((spec) => ({
      spec,
      values: new Float64Array(this.capacity),
      scored: 0,
      rawSum: 0,
      normalized: true,
      errors: 0,
      passed: 0,
      failed: 0,
    }));
    this.verdicts = new Int8Array(specs.length);
    this.trials = new TrialsAccumulator(specs, rule);
  }

  add(item: ItemResult): void {
    if (this.n === this.capacity) this.grow();
    const index = this.n++;
    if (item.status === 'done') this.completed++;
    else if (item.status === 'error') this.errored++;
    if (isScore(item.latency_ms)) this.latencies[this.latencyCount++] = item.latency_ms;
    if (isScore(item.cost_usd)) this.cost += item.cost_usd;
    const verdict = rowVerdictOf(item, this.rule);
    if (verdict === 1) this.rowsPassed++;
    else if (verdict === -1) this.rowsFailed++;
    for (let m = 0; m < this.metrics.length; m++) this.verdicts[m] = this.addScore(this.metrics[m], item, index);
    // Own keys only: a dimension named like an Object.prototype member must not read the prototype.
    if (item.dimensions)
      for (const name of ownKeys(item.dimensions))
        this.addDimension(name, item.dimensions[name] ?? null, index, verdict);
    if (this.row.length && this.row[0].row_id !== item.row_id) this.closeRow();
    this.row.push(item);
  }

  /** The summary of the items fed so far, broken down by the named dimensions (default: every dimension seen, by name). */
  result(dimensionNames?: readonly string[]): RunSummary {
    this.closeRow();
    const passRate = rate(this.rowsPassed, this.rowsFailed);
    const metricSummaries = this.metrics.map((tally) => this.metricSummary(tally));
    const sortedLatency = this.latencies.slice(0, this.latencyCount).sort();
    const reasons = verdictReasons(passRate, metricSummaries, this.metrics, this.rule);
    return {
      rows: this.n,
      completed: this.completed,
      errored: this.errored,
      passed_rows: this.rowsPassed,
      failed_rows: this.rowsFailed,
      pass_rate: passRate,
      passed: passRate === null ? null : reasons.length === 0,
      reasons,
      latency_ms: {
        mean: mean(sortedLatency),
        p50: nearestRank(sortedLatency, 0.5),
        p90: nearestRank(sortedLatency, 0.9),
        p99: nearestRank(sortedLatency, 0.99),
      },
      cost_usd_total: roundNano(this.cost),
      metrics: metricSummaries,
      by_dimension: (dimensionNames ?? [...this.dimensions.keys()].sort()).map((name) => this.breakdown(name)),
      trials: this.trials.result(),
    };
  }

  /** Tallies one metric's entry of an item and answers its verdict. */
  private addScore(tally: MetricTally, item: ItemResult, index: number): Verdict {
    tally.values[index] = NaN;
    const entry = hasOwn(item.scores, tally.spec.name) ? item.scores[tally.spec.name] : undefined;
    if (entry === undefined) {
      // A failed call never reached the metric: that is an error of the metric too.
      if (item.status === 'error') tally.errors++;
      return 0;
    }
    const value = reportedScore(entry);
    if (value !== null && isScore(entry.score)) {
      tally.values[index] = value;
      tally.scored++;
      tally.rawSum += entry.score;
      // A metric whose "normalised" value leaves 0..1 (an unbounded higher-is-better count such as length) has no scale.
      if (!isScore(entry.normalized) || entry.normalized < 0 || entry.normalized > 1) tally.normalized = false;
    } else if (entry.error) tally.errors++;
    const verdict = verdictOf(entry);
    if (verdict === 1) tally.passed++;
    else if (verdict === -1) tally.failed++;
    return verdict;
  }

  private addDimension(name: string, value: string | null, index: number, verdict: Verdict): void {
    let dimension = this.dimensions.get(name);
    if (!dimension) {
      // Zero-filled: the items before it had no value for it.
      dimension = { ids: new Map(), groups: new Uint32Array(this.capacity), tallies: [] };
      this.dimensions.set(name, dimension);
    }
    // Items without a value are counted at the end, as all items less those with one.
    if (value === null) return;
    let id = dimension.ids.get(value);
    if (id === undefined) {
      id = dimension.ids.size + 1;
      dimension.ids.set(value, id);
      dimension.tallies[id] = {
        rows: 0,
        passed: 0,
        failed: 0,
        metricPassed: this.metrics.map(() => 0),
        metricFailed: this.metrics.map(() => 0),
      };
    }
    dimension.groups[index] = id;
    const group = dimension.tallies[id];
    group.rows++;
    if (verdict === 1) group.passed++;
    else if (verdict === -1) group.failed++;
    for (let m = 0; m < this.metrics.length; m++) {
      if (this.verdicts[m] === 1) group.metricPassed[m]++;
      else if (this.verdicts[m] === -1) group.metricFailed[m]++;
    }
  }

  private metricSummary(tally: MetricTally): MetricSummary {
    const sorted = new Float64Array(tally.scored);
    let k = 0;
    for (let i = 0; i < this.n; i++) if (!notANumber(tally.values[i])) sorted[k++] = tally.values[i];
    sorted.sort();
    const centre = mean(sorted);
    const passRate = rate(tally.passed, tally.failed);
    const { spec } = tally;
    return {
      name: spec.name,
      scored: sorted.length,
      errors: tally.errors,
      scale: tally.normalized && sorted.length > 0 ? 'normalized' : 'raw',
      raw_mean: tally.scored ? tally.rawSum / tally.scored : null,
      mean: centre,
      median: median(sorted),
      p90: nearestRank(sorted, 0.9),
      min: sorted.length > 0 ? sorted[0] : null,
      max: sorted.length > 0 ? sorted[sorted.length - 1] : null,
      std: centre === null ? null : populationStd(sorted, centre),
      pass_rate: passRate,
      passed: tally.passed,
      failed: tally.failed,
      histogram: histogram(sorted),
      meets_min_pass_rate: spec.min_pass_rate === null ? null : passRate !== null && passRate >= spec.min_pass_rate,
    };
  }

  private breakdown(name: string): DimensionBreakdown {
    const dimension = this.dimensions.get(name) ?? {
      ids: new Map<string, number>(),
      groups: new Uint32Array(0),
      tallies: [],
    };
    const groups = dimension.tallies.length || 1;
    // The items without a value: everything less the items with one.
    const none: GroupTally = {
      rows: this.n,
      passed: this.rowsPassed,
      failed: this.rowsFailed,
      metricPassed: this.metrics.map((t) => t.passed),
      metricFailed: this.metrics.map((t) => t.failed),
    };
    for (let id = 1; id < groups; id++) {
      const group = dimension.tallies[id];
      none.rows -= group.rows;
      none.passed -= group.passed;
      none.failed -= group.failed;
      for (let m = 0; m < this.metrics.length; m++) {
        none.metricPassed[m] -= group.metricPassed[m];
        none.metricFailed[m] -= group.metricFailed[m];
      }
    }
    const means = this.metrics.map((tally) => this.groupMeans(tally, dimension, groups));
    const values = [...dimension.ids.keys()].sort();
    const ordered: Array<string | null> = none.rows > 0 ? [...values, null] : values;
    return {
      dimension: name,
      values: ordered.map((value) => {
        const id = value === null ? 0 : dimension.ids.get(value)!;
        const group = id === 0 ? none : dimension.tallies[id];
        const perMetric: Record<string, { mean: number | null; pass_rate: number | null }> = {};
        this.metrics.forEach((tally, m) => {
          perMetric[tally.spec.name] = {
            mean: means[m][id],
            pass_rate: rate(group.metricPassed[m], group.metricFailed[m]),
          };
        });
        return { value, rows: group.rows, pass_rate: rate(group.passed, group.failed), metrics: perMetric };
      }),
    };
  }

  /** Each group's mean of a metric, its values summed in ascending order (a counting sort by group, then each group sorted). */
  private groupMeans(tally: MetricTally, dimension: DimensionTally, groups: number): Array<number | null> {
    const group = (i: number) => (i < dimension.groups.length ? dimension.groups[i] : 0);
    const starts = new Uint32Array(groups + 1);
    for (let i = 0; i < this.n; i++) if (!notANumber(tally.values[i])) starts[group(i) + 1]++;
    for (let g = 0; g < groups; g++) starts[g + 1] += starts[g];
    const byGroup = new Float64Array(starts[groups]);
    const next = starts.slice(0, groups);
    for (let i = 0; i < this.n; i++) if (!notANumber(tally.values[i])) byGroup[next[group(i)]++] = tally.values[i];
    const means: Array<number | null> = [];
    for (let g = 0; g < groups; g++) means.push(mean(byGroup.subarray(starts[g], starts[g + 1]).sort()));
    return means;
  }

  private closeRow(): void {
    if (!this.row.length) return;
    this.trials.addRow(this.row);
    this.row = [];
  }

  private grow(): void {
    this.capacity *= 2;
    this.latencies = resized(this.latencies, this.capacity);
    for (const tally of this.metrics) tally.values = resized(tally.values, this.capacity);
    for (const dimension of this.dimensions.values()) dimension.groups = resized(dimension.groups, this.capacity);
  }
}

/** Why the run fails its pass rule, in words (none when it passes or nothing was counted). */
function verdictReasons(
  passRate: number | null,
  summaries: readonly MetricSummary[],
  tallies: readonly MetricTally[],
  rule: PassRule,
): string[] {
  const reasons: string[] = [];
  if (passRate === null) return reasons;
  if (passRate < rule.min_pass_rate) {
    const [value, threshold] = formatPair(passRate, rule.min_pass_rate);
    reasons.push(`row pass rate ${value} is below ${threshold}`);
  }
  tallies.forEach(({ spec }, i) => {
    const summary = summaries[i];
    if (spec.min_pass_rate === null || summary.meets_min_pass_rate !== false) return;
    if (summary.pass_rate === null) {
      reasons.push(`metric ${spec.name} has no verdicts to meet its ${spec.min_pass_rate.toFixed(2)}`);
    } else {
      const [value, threshold] = formatPair(summary.pass_rate, spec.min_pass_rate);
      reasons.push(`metric ${spec.name} passes on ${value} of rows, below its ${threshold}`);
    }
  });
  return reasons;
}

/** Two decimals, or more when two decimals would print a value below its threshold as equal to it. */
function formatPair(value: number, threshold: number): [string, string] {
  let digits = 2;
  while (digits < 6 && value.toFixed(digits) === threshold.toFixed(digits)) digits++;
  return [value.toFixed(digits), threshold.toFixed(digits)];
}

/**
 * The summary of a list of items. A row's repetitions are brought together first (rows in order
 * of first appearance) when the list has them apart; a run's items in their order never do.
 */
export function summarize(
  items: readonly ItemResult[],
  metrics: readonly RunMetricSpec[],
  rule: PassRule,
  dimensionNames?: readonly string[],
): RunSummary {
  const summary = new SummaryAccumulator(metrics, rule, items.length);
  for (const reps of byRow(items)) for (const item of reps) summary.add(item);
  return summary.result(dimensionNames);
}
