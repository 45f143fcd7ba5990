/**
 * How far an LLM judge can be trusted against human labels of the same items: for pass/fail
 * verdicts the confusion matrix, true positive and true negative rates, accuracy and Cohen's
 * kappa; for numeric scores Spearman's rho and the mean absolute error; the same per group (a
 * dimension value); and whether one judge (say, a new rubric version) is right more often than
 * another on the same items. A pass is the positive class: sensitivity is the share of the items
 * humans passed that the judge passed too.
 */
import { lazyRequire } from '#libs/common/lazy-require.js';
import { cohensKappa, estimate, type Estimate, type EstimateOptions, type OverItems } from './agreement.js';
import { allItems, seedFromText, type Interval } from './bootstrap.js';
import { mcnemarExact, type PairedTestResult } from './paired-tests.js';

const normalQuantile = lazyRequire<typeof import('@stdlib/stats-base-dists-normal-quantile')>(
  '@stdlib/stats-base-dists-normal-quantile',
);

const { abs, max, min, sqrt } = Math;

/** A pass (true) or fail (false) verdict or label; null or undefined where there is none. */
export type Verdict = boolean | null | undefined;

/** A score on a numeric scale; null or undefined where there is none. */
export type Score = number | null | undefined;

/** The z of a two-sided normal interval at this level: 1.96 for 0.95. */
export function normalCritical(level: number): number {
  return normalQuantile()((1 + level) / 2, 0, 1);
}

/**
 * Wilson's score interval for a proportion (Wilson 1927; Newcombe 1998, method 3): the
 * proportions p whose normal test against the observed share would not reject at this level. Unlike
 * p ± z·se it stays inside [0, 1] and keeps near its level for small n and shares near 0 or 1.
 * Null without trials.
 */
export function wilsonInterval(successes: number, trials: number, level = 0.95): Interval | null {
  if (trials === 0) return null;
  const z = normalCritical(level);
  const p = successes / trials;
  const shrink = 1 + (z * z) / trials;
  const centre = (p + (z * z) / (2 * trials)) / shrink;
  const half = (z / shrink) * sqrt((p * (1 - p)) / trials + (z * z) / (4 * trials * trials));
  return { low: max(0, centre - half), high: min(1, centre + half) };
}

/** A share of trials with its Wilson interval, or null and why. */
export type Proportion =
  | { value: number; successes: number; trials: number; interval: Interval; reason: null }
  | { value: null; successes: number; trials: number; interval: null; reason: string };

/** The share successes / trials with its Wilson interval; undefined without trials (`reason` says what was missing). */
export function proportion(successes: number, trials: number, reason: string, level = 0.95): Proportion {
  const interval = wilsonInterval(successes, trials, level);
  return interval
    ? { value: successes / trials, successes, trials, interval, reason: null }
    : { value: null, successes, trials, interval: null, reason };
}

/** Judge against humans on the items both labelled. */
export interface ConfusionMatrix {
  /** Both passed. */
  true_positive: number;
  /** The judge passed what humans failed. */
  false_positive: number;
  /** Both failed. */
  true_negative: number;
  /** The judge failed what humans passed. */
  false_negative: number;
  /** Items with both a verdict and a human label. */
  items: number;
}

/** Counts the four cells over the items with both a judge verdict and a human label. */
export function confusionMatrix(judge: readonly Verdict[], human: readonly Verdict[]): ConfusionMatrix {
  const m = { true_positive: 0, false_positive: 0, true_negative: 0, false_negative: 0, items: 0 };
  judge.forEach((j, i) => {
    const h = human[i];
    if (j == null || h == null) return;
    m.items++;
    if (j && h) m.true_positive++;
    else if (j) m.false_positive++;
    else if (h) m.false_negative++;
    else m.true_negative++;
  });
  return m;
}

export interface BinaryValidity {
  confusion: ConfusionMatrix;
  /** True positive rate: of the items humans passed, the share the judge passed. */
  sensitivity: Proportion;
  /** True negative rate: of the items humans failed, the share the judge failed. */
  specificity: Proportion;
  /** Share of items where the judge and humans agree. */
  accuracy: Proportion;
  /** Cohen's kappa of the judge against humans: agreement beyond what their pass rates give by chance. */
  kappa: Estimate;
}

/**
 * A pass/fail judge against the final human labels of the same items: the confusion matrix, the
 * true positive rate, true negative rate and accuracy with Wilson intervals, and Cohen's kappa with
 * a percentile bootstrap interval over items (when `options.seed` is given).
 */
export function binaryValidity(
  judge: readonly Verdict[],
  human: readonly Verdict[],
  options: EstimateOptions = {},
): BinaryValidity {
  const confusion = confusionMatrix(judge, human);
  const { true_positive: tp, false_positive: fp, true_negative: tn, false_negative: fn } = confusion;
  const level = options.confidence ?? 0.95;
  const label = (v: Verdict) => (v == null ? null : v ? 'pass' : 'fail');
  return {
    confusion,
    sensitivity: proportion(tp, tp + fn, 'humans passed no item the judge also rated', level),
    specificity: proportion(tn, tn + fp, 'humans failed no item the judge also rated', level),
    accuracy: proportion(tp + tn, confusion.items, 'no item has both a verdict and a human label', level),
    kappa: cohensKappa(judge.map(label), human.map(label), options),
  };
}

/** Average ranks (1-based; tied values share the mean of their ranks) of values[indices[i]]. */
function averageRanks(values: readonly number[], indices: ArrayLike<number>): Float64Array {
  const n = indices.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => values[indices[a]] - values[indices[b]]);
  const ranks = new Float64Array(n);
  for (let start = 0; start < n;) {
    let end = start + 1;
    while (end < n && values[indices[order[end]]] === values[indices[order[start]]]) end++;
    const rank = (start + end + 1) / 2;
    for (let k = start; k < end; k++) ranks[order[k]] = rank;
    start = end;
  }
  return ranks;
}

/** Pearson's correlation; null when either side is constant or fewer than two values. */
function pearson(x: ArrayLike<number>, y: ArrayLike<number>): number | null {
  const n = x.length;
  if (n < 2) return null;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) [mx, my] = [mx + x[i] / n, my + y[i] / n];
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
    syy += (y[i] - my) ** 2;
  }
  return sxx === 0 || syy === 0 ? null : max(-1, min(1, sxy / sqrt(sxx * syy)));
}

/**
 * Spearman's rho: Pearson's correlation of the ranks, tied values sharing the mean of their
 * ranks. Null when either side is constant or there are fewer than two pairs.
 */
export function spearmanRho(x: readonly number[], y: readonly number[], indices?: ArrayLike<number>): number | null {
  const over = indices ?? allItems(x.length);
  return pearson(averageRanks(x, over), averageRanks(y, over));
}

export interface ScoreValidity {
  /** Items with both a judge score and a human score. */
  items: number;
  spearman: Estimate;
  /** Mean of |judge − human|, in the scale's units. */
  mean_absolute_error: Estimate;
}

/**
 * A judge's numeric scores against human scores of the same items: Spearman's rho (ties
 * averaged) and the mean absolute error, each with a percentile bootstrap interval over items
 * when `options.seed` is given.
 */
export function scoreValidity(
  judge: readonly Score[],
  human: readonly Score[],
  options: EstimateOptions = {},
): ScoreValidity {
  const both = judge.flatMap((j, i) => (j == null || human[i] == null ? [] : [i]));
  const x = both.map((i) => judge[i] as number);
  const y = both.map((i) => human[i] as number);
  const n = both.length;
  const mae: OverItems = (indices) => {
    if (indices.length === 0) return 'no item has both a judge score and a human score';
    let sum = 0;
    for (const i of indices) sum += abs(x[i] - y[i]);
    return sum / indices.length;
  };
  const rho: OverItems = (indices) =>
    spearmanRho(x, y, indices) ?? 'fewer than 2 items, or one side gives a single score';
  return { items: n, spearman: estimate(n, rho, options), mean_absolute_error: estimate(n, mae, options) };
}

/** Item indices per group value (null: `(none)`), groups in code-point order. */
function groupsOf(groups: ReadonlyArray<string | null | undefined>): Array<[string, number[]]> {
  const by = new Map<string, number[]>();
  groups.forEach((g, i) => {
    const key = g ?? '(none)';
    by.set(key, [...(by.get(key) ?? []), i]);
  });
  return [...by.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The seed of one group's bootstrap: the caller's seed and the group's value, so that groups draw apart. */
function groupOptions(options: EstimateOptions, group: string): EstimateOptions {
  return options.seed === undefined ? options : { ...options, seed: seedFromText(`${options.seed}|${group}`) };
}

/** A validity measure per value of a dimension, each group's bootstrap seeded apart. */
function byGroup<V, R>(
  groups: ReadonlyArray<string | null | undefined>,
  judge: readonly V[],
  human: readonly V[],
  options: EstimateOptions,
  validity: (judge: V[], human: V[], options: EstimateOptions) => R,
): Array<{ group: string; validity: R }> {
  return groupsOf(groups).map(([group, items]) => ({
    group,
    validity: validity(
      items.map((i) => judge[i]),
      items.map((i) => human[i]),
      groupOptions(options, group),
    ),
  }));
}

/** binaryValidity for each value of a dimension (`groups[i]` is item i's value; items without one form `(none)`). */
export function binaryValidityByGroup(
  groups: ReadonlyArray<string | null | undefined>,
  judge: readonly Verdict[],
  human: readonly Verdict[],
  options: EstimateOptions = {},
): Array<{ group: string; validity: BinaryValidity }> {
  return byGroup(groups, judge, human, options, binaryValidity);
}

/** scoreValidity for each value of a dimension (`groups[i]` is item i's value; items without one form `(none)`). */
export function scoreValidityByGroup(
  groups: ReadonlyArray<string | null | undefined>,
  judge: readonly Score[],
  human: readonly Score[],
  options: EstimateOptions = {},
): Array<{ group: string; validity: ScoreValidity }> {
  return byGroup(groups, judge, human, options, scoreValidity);
}

export interface JudgeComparison {
  /** Items with a verdict of both judges and a human label. */
  items: number;
  accuracy_a: Proportion;
  accuracy_b: Proportion;
  /** Items judge a got right and judge b wrong. */
  only_a_correct: number;
  /** Items judge b got right and judge a wrong. */
  only_b_correct: number;
  /** accuracy of b − accuracy of a; null without items. */
  difference: number | null;
  /** McNemar's exact test of the two judges' correctness on the same items (two-sided). */
  mcnemar: PairedTestResult;
}

/**
 * Two judges (say, two versions of a rubric) on the same items against the same human labels:
 * each one's accuracy, and McNemar's exact test of whether one is right more often than the
 * other, which looks only at the items exactly one of them got right.
 */
export function compareJudges(
  a: readonly Verdict[],
  b: readonly Verdict[],
  human: readonly Verdict[],
  options: Pick<EstimateOptions, 'confidence'> = {},
): JudgeComparison {
  let items = 0;
  let correctA = 0;
  let correctB = 0;
  let onlyA = 0;
  let onlyB = 0;
  human.forEach((h, i) => {
    if (h == null || a[i] == null || b[i] == null) return;
    items++;
    const [rightA, rightB] = [a[i] === h, b[i] === h];
    if (rightA) correctA++;
    if (rightB) correctB++;
    if (rightA && !rightB) onlyA++;
    if (rightB && !rightA) onlyB++;
  });
  const none = 'no item has both verdicts and a human label';
  return {
    items,
    accuracy_a: proportion(correctA, items, none, options.confidence),
    accuracy_b: proportion(correctB, items, none, options.confidence),
    only_a_correct: onlyA,
    only_b_correct: onlyB,
    difference: items === 0 ? null : (correctB - correctA) / items,
    mcnemar: mcnemarExact(onlyA, onlyB),
  };
}
