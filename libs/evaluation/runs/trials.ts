/**
 * Repeated trials: how a run's rows behave when each is sent several times. pass@k (some of k
 * tries pass) and pass^k (all k pass) by the unbiased estimators of Chen et al. 2021 (Codex,
 * "Evaluating Large Language Models Trained on Code") and Yao et al. 2024 (tau-bench), the share
 * of flaky rows and each metric's spread across repetitions.
 */
import type { ItemResult, PassRule, RunMetricSpec, TrialsSummary } from './run.types.js';
import { isScore, mean, reportedScore } from './stats.js';

const { hasOwn } = Object;

/** Share of flaky rows up to which a run still reads `mostly_stable`. */
export const MOSTLY_STABLE_SHARE = 0.05;
/** Flaky rows listed in the summary. */
export const FLAKY_EXAMPLES = 100;

/** 1 - C(n - c, k) / C(n, k): the chance that at least one of k of the row's n tries (c passed) passes. */
export function passAtK(n: number, c: number, k: number): number {
  if (k > n) throw new RangeError(`k (${k}) exceeds the trials (${n})`);
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = 0; i < k; i++) allFail *= (n - c - i) / (n - i);
  return 1 - allFail;
}

/** C(c, k) / C(n, k): the chance that k of the row's n tries (c passed), drawn without replacement, all pass. */
export function passHatK(n: number, c: number, k: number): number {
  if (k > n) throw new RangeError(`k (${k}) exceeds the trials (${n})`);
  if (c < k) return 0;
  let allPass = 1;
  for (let i = 0; i < k; i++) allPass *= (c - i) / (n - i);
  return allPass;
}

/** Sample variance (n - 1); null under two values. */
function sampleVariance(values: readonly number[]): number | null {
  if (values.length < 2) return null;
  const centre = mean(values)!;
  let squares = 0;
  for (const v of values) squares += (v - centre) * (v - centre);
  return squares / (values.length - 1);
}

/** A try's verdict: the row verdict, an errored call failing when the pass rule says so. */
function verdictOf(item: ItemResult, rule: PassRule): boolean | null {
  if (item.status === 'error') return rule.errors_fail ? false : null;
  return item.passed;
}

export function summarizeTrials(
  items: readonly ItemResult[],
  metrics: readonly RunMetricSpec[],
  rule: PassRule,
): TrialsSummary {
  const trials = new TrialsAccumulator(metrics, rule);
  for (const reps of byRow(items)) trials.addRow(reps);
  return trials.result();
}

/** Items grouped by row, rows in order of first appearance, each row's items in their order. */
export function byRow(items: readonly ItemResult[]): Iterable<ItemResult[]> {
  const rows = new Map<string, ItemResult[]>();
  for (const item of items) {
    const reps = rows.get(item.row_id);
    if (reps) reps.push(item);
    else rows.set(item.row_id, [item]);
  }
  return rows.values();
}

/** Running sums of one metric across rows and repetitions. */
interface MetricSpread {
  name: string;
  varianceSum: number;
  varianceRows: number;
  /** repetition -> sum and count of its scores, summed in row order. */
  byRepetition: Map<number, { sum: number; count: number }>;
  mixed: number;
}

/**
 * The trials summary fed one row at a time (all of a row's items at once), in the run's row
 * order: it keeps sums per k, per metric and per repetition, and the first flaky rows, never the
 * rows themselves. Sums are taken in the order rows are given, so a run's items read in their
 * order give the same numbers as the whole list would.
 */
export class TrialsAccumulator {
  private repetitions = 0;
  private rows = 0;
  private repeated = 0;
  private flakyRows = 0;
  /** Index k - 1: rows with at least k verdicts, and their pass@k and pass^k sums. */
  private readonly byK: Array<{ rows: number; at: number; hat: number }> = [];
  private readonly flaky: TrialsSummary['flaky_examples'] = [];
  private readonly spread: MetricSpread[];

  constructor(
    metrics: readonly RunMetricSpec[],
    private readonly rule: PassRule,
  ) {
    this.spread = metrics.map((m) => ({
      name: m.name,
      varianceSum: 0,
      varianceRows: 0,
      byRepetition: new Map(),
      mixed: 0,
    }));
  }

  /** One row's items (its repetitions), each row once. */
  addRow(reps: readonly ItemResult[]): void {
    this.repetitions = Math.max(this.repetitions, reps.length);
    while (this.byK.length < this.repetitions) this.byK.push({ rows: 0, at: 0, hat: 0 });
    let n = 0;
    let c = 0;
    for (const item of reps) {
      const v = verdictOf(item, this.rule);
      if (v === null) continue;
      n++;
      if (v) c++;
    }
    if (n > 0) this.addVerdicts(reps[0].row_id, n, c);
    for (const metric of this.spread) this.addScores(metric, reps);
  }

  private addVerdicts(rowId: string, n: number, c: number): void {
    this.rows++;
    for (let k = 1; k <= n; k++) {
      const slot = this.byK[k - 1];
      slot.rows++;
      slot.at += passAtK(n, c, k);
      slot.hat += passHatK(n, c, k);
    }
    if (n < 2) return;
    this.repeated++;
    if (c === 0 || c === n) return;
    this.flakyRows++;
    if (this.flaky.length < FLAKY_EXAMPLES) {
      const ks = Array.from({ length: n }, (_, i) => i + 1);
      this.flaky.push({
        row_id: rowId,
        trials: n,
        passed: c,
        pass_at_k: ks.map((k) => passAtK(n, c, k)),
        pass_hat_k: ks.map((k) => passHatK(n, c, k)),
      });
    }
  }

  private addScores(metric: MetricSpread, reps: readonly ItemResult[]): void {
    const scores: number[] = [];
    let passed = 0;
    let failed = 0;
    for (const item of reps) {
      const entry = hasOwn(item.scores, metric.name) ? item.scores[metric.name] : undefined;
      const value = reportedScore(entry);
      if (isScore(value)) {
        scores.push(value);
        const slot = metric.byRepetition.get(item.repetition);
        if (slot) {
          slot.sum += value;
          slot.count++;
        } else metric.byRepetition.set(item.repetition, { sum: value, count: 1 });
      }
      if (entry?.passed === true) passed++;
      else if (entry?.passed === false) failed++;
    }
    const variance = sampleVariance(scores);
    if (variance !== null) {
      metric.varianceSum += variance;
      metric.varianceRows++;
    }
    if (passed > 0 && failed > 0) metric.mixed++;
  }

  result(): TrialsSummary {
    const flakyShare = this.repeated === 0 ? null : this.flakyRows / this.repeated;
    return {
      repetitions: this.repetitions,
      rows: this.rows,
      repeated_rows: this.repeated,
      by_k: this.byK.map((slot, i) => ({
        k: i + 1,
        rows: slot.rows,
        pass_at_k: slot.rows ? slot.at / slot.rows : null,
        pass_hat_k: slot.rows ? slot.hat / slot.rows : null,
      })),
      flaky_rows: this.flakyRows,
      flaky_share: flakyShare,
      stability:
        this.repeated === 0
          ? 'single_trial'
          : this.flakyRows === 0
            ? 'stable'
            : flakyShare! <= MOSTLY_STABLE_SHARE
              ? 'mostly_stable'
              : 'unstable',
      metrics: this.spread.map((metric) => {
        const repetitionMeans = [...metric.byRepetition.keys()]
          .sort((a, b) => a - b)
          .map((r) => {
            const slot = metric.byRepetition.get(r)!;
            return slot.sum / slot.count;
          });
        const between = sampleVariance(repetitionMeans);
        return {
          name: metric.name,
          rows: metric.varianceRows,
          within_row_variance: metric.varianceRows ? metric.varianceSum / metric.varianceRows : null,
          repetition_means: repetitionMeans,
          between_repetition_std: between === null ? null : Math.sqrt(between),
          flaky_rows: metric.mixed,
        };
      }),
      flaky_examples: this.flaky,
    };
  }
}
