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

export function summarizeTrials(items: readonly ItemResult[], metrics: readonly RunMetricSpec[], rule: PassRule): TrialsSummary {
  const byRow = new Map<string, ItemResult[]>();
  let repetitions = 0;
  for (const item of items) {
    const reps = byRow.get(item.row_id);
    if (reps) reps.push(item);
    else byRow.set(item.row_id, [item]);
  }
  const verdicts = new Map<string, { n: number; c: number }>();
  for (const [rowId, reps] of byRow) {
    repetitions = Math.max(repetitions, reps.length);
    let n = 0;
    let c = 0;
    for (const item of reps) {
      const v = verdictOf(item, rule);
      if (v === null) continue;
      n++;
      if (v) c++;
    }
    if (n > 0) verdicts.set(rowId, { n, c });
  }

  const byK = [];
  for (let k = 1; k <= repetitions; k++) {
    const at: number[] = [];
    const hat: number[] = [];
    for (const { n, c } of verdicts.values()) {
      if (n < k) continue;
      at.push(passAtK(n, c, k));
      hat.push(passHatK(n, c, k));
    }
    byK.push({ k, rows: at.length, pass_at_k: mean(at), pass_hat_k: mean(hat) });
  }

  let repeated = 0;
  const flaky: TrialsSummary['flaky_examples'] = [];
  let flakyRows = 0;
  for (const [rowId, { n, c }] of verdicts) {
    if (n < 2) continue;
    repeated++;
    if (c === 0 || c === n) continue;
    flakyRows++;
    if (flaky.length < FLAKY_EXAMPLES) {
      const ks = Array.from({ length: n }, (_, i) => i + 1);
      flaky.push({ row_id: rowId, trials: n, passed: c, pass_at_k: ks.map((k) => passAtK(n, c, k)), pass_hat_k: ks.map((k) => passHatK(n, c, k)) });
    }
  }
  const flakyShare = repeated === 0 ? null : flakyRows / repeated;

  const metricSpread = metrics.map((metric) => {
    const rowVariances: number[] = [];
    const byRepetition = new Map<number, number[]>();
    let mixed = 0;
    for (const reps of byRow.values()) {
      const scores: number[] = [];
      let passed = 0;
      let failed = 0;
      for (const item of reps) {
        const entry = hasOwn(item.scores, metric.name) ? item.scores[metric.name] : undefined;
        const value = reportedScore(entry);
        if (isScore(value)) {
          scores.push(value);
          const list = byRepetition.get(item.repetition);
          if (list) list.push(value);
          else byRepetition.set(item.repetition, [value]);
        }
        if (entry?.passed === true) passed++;
        else if (entry?.passed === false) failed++;
      }
      const variance = sampleVariance(scores);
      if (variance !== null) rowVariances.push(variance);
      if (passed > 0 && failed > 0) mixed++;
    }
    const repetitionMeans = [...byRepetition.keys()].sort((a, b) => a - b).map((r) => mean(byRepetition.get(r)!)!);
    const between = sampleVariance(repetitionMeans);
    return {
      name: metric.name,
      rows: rowVariances.length,
      within_row_variance: mean(rowVariances),
      repetition_means: repetitionMeans,
      between_repetition_std: between === null ? null : Math.sqrt(between),
      flaky_rows: mixed,
    };
  });

  return {
    repetitions,
    rows: verdicts.size,
    repeated_rows: repeated,
    by_k: byK,
    flaky_rows: flakyRows,
    flaky_share: flakyShare,
    stability: repeated === 0 ? 'single_trial' : flakyRows === 0 ? 'stable' : flakyShare! <= MOSTLY_STABLE_SHARE ? 'mostly_stable' : 'unstable',
    metrics: metricSpread,
    flaky_examples: flaky,
  };
}
