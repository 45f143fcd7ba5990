/**
 * How far raters who label the same items agree: percent agreement, Cohen's kappa (plain and
 * weighted), Fleiss' kappa and Krippendorff's alpha, each with a seeded percentile bootstrap
 * interval over items, plus each rater's agreement with the others and the items they disagree on.
 *
 * The input is a table with one row per item and one column per rater; a cell is the label that
 * rater gave that item, or null (or undefined) where they gave none. A statistic that the data
 * cannot define (one category only, fewer than two items labelled twice…) is `value: null` with
 * the reason, never NaN.
 */
import { allItems, bootstrapItemsInterval, BOOTSTRAP_RESAMPLES, type BootstrapInterval } from './bootstrap.js';

export type RatingValue = string | number;

/** One row per item, one column per rater: the label that rater gave the item, or null where they gave none. */
export type Ratings = ReadonlyArray<ReadonlyArray<RatingValue | null | undefined>>;

/** A statistic's value and its bootstrap interval, or null and why the data do not define it. */
export type Estimate =
  { value: number; interval: BootstrapInterval | null; reason: null } | { value: null; interval: null; reason: string };

export interface EstimateOptions {
  /** Seed of the bootstrap over items: the same data and seed give the same interval. Without a seed there is no interval. */
  seed?: number;
  /** Confidence level of the interval, 0.95 by default. */
  confidence?: number;
  /** Bootstrap resamples, 2000 by default. */
  resamples?: number;
}

export interface ScaleOptions {
  /**
   * Every category in its order, lowest first. Needed to order text labels (ordinal alpha,
   * weighted kappa); without it numbers are ordered by value and text by code point. A label
   * outside this list is an error.
   */
  categories?: readonly RatingValue[];
}

/** Krippendorff's levels of measurement: which differences between two labels count, and how much. */
export type MeasurementLevel = 'nominal' | 'ordinal' | 'interval' | 'ratio';

/** Cohen's weights: `none` counts every disagreement alike; `linear` and `quadratic` by the distance of the two categories in their order. */
export type KappaWeights = 'none' | 'linear' | 'quadratic';

export const REASONS = {
  fewerThanTwoItems: 'fewer than 2 items were labelled by at least two raters',
  noItem: 'no item was labelled by at least two raters',
  oneCategory: 'every label is the same category: chance agreement is total',
  needsOrder: 'text labels on an ordered scale need their order (options.categories)',
  needsNumbers: 'interval and ratio data need numeric labels',
  needsNonNegative: 'ratio data need labels of at least 0',
  twoRaters: "Cohen's kappa compares exactly two raters",
  noOverlap: 'no item this rater labelled was labelled by another rater',
  noMajority: 'no item this rater labelled had a single most frequent label among the other raters',
} as const;

/** The table with its labels replaced by category indices, and per item the count of each category. */
interface Coded {
  items: number;
  raters: number;
  categories: readonly RatingValue[];
  /** codes[item * raters + rater]: the category index, or -1 for no label. */
  codes: Int32Array;
  /** counts[item * categories + category]. */
  counts: Int32Array;
  /** Labels per item. */
  labelled: Int32Array;
  /** The categories each item has (a count above 0), for sparse sums. */
  present: Int32Array[];
}

function compareValues(a: RatingValue, b: RatingValue): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function code(ratings: Ratings, categories?: readonly RatingValue[]): Coded {
  const items = ratings.length;
  const raters = ratings.reduce((most, row) => Math.max(most, row.length), 0);
  const values =
    categories ?? [...new Set(ratings.flat().filter((v): v is RatingValue => v != null))].sort(compareValues);
  const index = new Map(values.map((v, i) => [v, i]));
  const K = values.length;
  const codes = new Int32Array(items * raters).fill(-1);
  const counts = new Int32Array(items * K);
  const labelled = new Int32Array(items);
  ratings.forEach((row, i) =>
    row.forEach((value, r) => {
      if (value == null) return;
      const c = index.get(value);
      if (c === undefined) throw new RangeError(`label ${JSON.stringify(value)} is not among the categories given`);
      codes[i * raters + r] = c;
      counts[i * K + c]++;
      labelled[i]++;
    }),
  );
  const present = Array.from({ length: items }, (_, i) =>
    Int32Array.from(values.keys()).filter((c) => counts[i * K + c] > 0),
  );
  return { items, raters, categories: values, codes, counts, labelled, present };
}

/** A statistic written over a multiset of item indices (an index may repeat): a number, or the reason it is undefined. */
export type OverItems = (indices: Int32Array) => number | string;

/**
 * A statistic of n items and, when `options.seed` is given, its percentile bootstrap interval over
 * items (bootstrapItemsInterval): the value on every item once, or null with the reason.
 */
export function estimate(items: number, statistic: OverItems, options: EstimateOptions): Estimate {
  const point = statistic(allItems(items));
  if (typeof point === 'string') return { value: null, interval: null, reason: point };
  const interval =
    options.seed === undefined
      ? null
      : bootstrapItemsInterval(
          items,
          (indices) => {
            const value = statistic(indices);
            return typeof value === 'number' ? value : null;
          },
          options.seed,
          options.confidence ?? 0.95,
          options.resamples ?? BOOTSTRAP_RESAMPLES,
        );
  return { value: point, interval, reason: null };
}

function undefinedEstimate(reason: string): Estimate {
  return { value: null, interval: null, reason };
}

function percentAgreementOver(c: Coded): OverItems {
  const K = c.categories.length;
  return (indices) => {
    let sum = 0;
    let rated = 0;
    for (let t = 0; t < indices.length; t++) {
      const i = indices[t];
      const m = c.labelled[i];
      if (m < 2) continue;
      let agreeing = 0;
      for (const k of c.present[i]) agreeing += c.counts[i * K + k] * (c.counts[i * K + k] - 1);
      sum += agreeing / (m * (m - 1));
      rated++;
    }
    return rated === 0 ? REASONS.noItem : sum / rated;
  };
}

/**
 * Percent agreement: on each item labelled by at least two raters, the share of pairs of its
 * labels that are equal (3 raters saying a, a, b: 1 pair of 3); then the mean over those items,
 * each item counting once.
 */
export function percentAgreement(ratings: Ratings, options: EstimateOptions = {}): Estimate {
  const c = code(ratings);
  return estimate(c.items, percentAgreementOver(c), options);
}

/** Disagreement weights between categories i and j of an ordered scale of K (0 on the diagonal). */
function kappaWeights(weights: KappaWeights, K: number): Float64Array {
  const w = new Float64Array(K * K);
  for (let i = 0; i < K; i++)
    for (let j = 0; j < K; j++) {
      const distance = Math.abs(i - j) / Math.max(1, K - 1);
      w[i * K + j] = weights === 'none' ? (i === j ? 0 : 1) : weights === 'linear' ? distance : distance * distance;
    }
  return w;
}

function cohenOver(c: Coded, a: number, b: number, w: Float64Array): OverItems {
  const K = c.categories.length;
  const R = c.raters;
  return (indices) => {
    const rows = new Float64Array(K);
    const columns = new Float64Array(K);
    let n = 0;
    let observed = 0;
    for (let t = 0; t < indices.length; t++) {
      const i = indices[t];
      const x = c.codes[i * R + a];
      const y = c.codes[i * R + b];
      if (x < 0 || y < 0) continue;
      n++;
      observed += w[x * K + y];
      rows[x]++;
      columns[y]++;
    }
    if (n < 2) return REASONS.fewerThanTwoItems;
    let expected = 0;
    for (let x = 0; x < K; x++) for (let y = 0; y < K; y++) expected += rows[x] * columns[y] * w[x * K + y];
    if (expected === 0) return REASONS.oneCategory;
    // 1 - observed disagreement / disagreement expected by chance, each as a share of its pairs.
    return 1 - observed / n / (expected / (n * n));
  };
}

/** Whether the scale has an order the data can use: numbers, or categories given. */
function ordered(c: Coded, options: ScaleOptions): boolean {
  return options.categories !== undefined || c.categories.every((v) => typeof v === 'number');
}

/**
 * Cohen's kappa of two raters over the items both labelled: (observed agreement − agreement
 * expected by chance from each rater's own label frequencies) / (1 − the chance agreement).
 * Weighted (Cohen 1968) for ordered scales: a disagreement counts by the distance between the two
 * categories in their order, |i − j| (`linear`) or its square (`quadratic`); kappa is then
 * 1 − observed weighted disagreement / chance weighted disagreement.
 */
export function cohensKappa(
  a: ReadonlyArray<RatingValue | null | undefined>,
  b: ReadonlyArray<RatingValue | null | undefined>,
  options: EstimateOptions & ScaleOptions & { weights?: KappaWeights } = {},
): Estimate {
  const c = code(
    a.map((x, i) => [x, b[i]]),
    options.categories,
  );
  const weights = options.weights ?? 'none';
  if (weights !== 'none' && !ordered(c, options)) return undefinedEstimate(REASONS.needsOrder);
  return estimate(c.items, cohenOver(c, 0, 1, kappaWeights(weights, c.categories.length)), options);
}

function fleissOver(c: Coded): OverItems {
  const K = c.categories.length;
  return (indices) => {
    const shares = new Float64Array(K);
    let agreement = 0;
    let paired = 0;
    let labelledItems = 0;
    for (let t = 0; t < indices.length; t++) {
      const i = indices[t];
      const m = c.labelled[i];
      if (m === 0) continue;
      labelledItems++;
      let agreeing = 0;
      for (const k of c.present[i]) {
        const n = c.counts[i * K + k];
        shares[k] += n / m;
        agreeing += n * (n - 1);
      }
      if (m < 2) continue;
      paired++;
      agreement += agreeing / (m * (m - 1));
    }
    if (paired < 2) return REASONS.fewerThanTwoItems;
    let chance = 0;
    let seen = 0;
    for (let k = 0; k < K; k++) {
      if (shares[k] > 0) seen++;
      chance += (shares[k] / labelledItems) ** 2;
    }
    if (seen < 2) return REASONS.oneCategory;
    return (agreement / paired - chance) / (1 - chance);
  };
}

/**
 * Fleiss' kappa (Fleiss 1971) of any number of raters: the mean over items of the share of
 * agreeing pairs of labels, against the chance of agreement from the overall category shares.
 * Items may have different numbers of labels, as Gwet (2014, Handbook of Inter-Rater
 * Reliability, 4th ed.) generalises it: the observed agreement is averaged over the items with at
 * least two labels, and a category's share is the mean over the labelled items of its share of
 * each item's labels. With the same number of labels on every item this is Fleiss' own formula.
 */
export function fleissKappa(ratings: Ratings, options: EstimateOptions = {}): Estimate {
  const c = code(ratings);
  return estimate(c.items, fleissOver(c), options);
}

/** Squared distance δ² between every two categories at this level of measurement (`totals`: labels per category, for ordinal). */
function distances(c: Coded, level: MeasurementLevel, totals: Float64Array): Float64Array {
  const K = c.categories.length;
  const d = new Float64Array(K * K);
  const value = c.categories as readonly number[];
  for (let i = 0; i < K; i++)
    for (let j = 0; j < K; j++) {
      if (i === j) continue;
      if (level === 'nominal') d[i * K + j] = 1;
      else if (level === 'interval') d[i * K + j] = (value[i] - value[j]) ** 2;
      else if (level === 'ratio') d[i * K + j] = ((value[i] - value[j]) / (value[i] + value[j])) ** 2;
      else {
        // Ordinal: the labels between the two categories (half of each end's own), squared.
        const [low, high] = i < j ? [i, j] : [j, i];
        let between = 0;
        for (let g = low; g <= high; g++) between += totals[g];
        d[i * K + j] = (between - (totals[i] + totals[j]) / 2) ** 2;
      }
    }
  return d;
}

function alphaOver(c: Coded, level: MeasurementLevel): OverItems {
  const K = c.categories.length;
  return (indices) => {
    // The coincidence matrix: every ordered pair of labels from two raters of one item, 1 / (m - 1) each.
    const o = new Float64Array(K * K);
    let pairable = 0;
    for (let t = 0; t < indices.length; t++) {
      const i = indices[t];
      const m = c.labelled[i];
      if (m < 2) continue;
      pairable++;
      for (const x of c.present[i])
        for (const y of c.present[i])
          o[x * K + y] += (c.counts[i * K + x] * (c.counts[i * K + y] - (x === y ? 1 : 0))) / (m - 1);
    }
    if (pairable < 2) return REASONS.fewerThanTwoItems;
    const totals = new Float64Array(K);
    for (let x = 0; x < K; x++) for (let y = 0; y < K; y++) totals[x] += o[x * K + y];
    const n = totals.reduce((s, t) => s + t, 0);
    const d = distances(c, level, totals);
    let observed = 0;
    let expected = 0;
    for (let x = 0; x < K; x++)
      for (let y = 0; y < K; y++) {
        observed += o[x * K + y] * d[x * K + y];
        expected += totals[x] * totals[y] * d[x * K + y];
      }
    if (expected === 0) return REASONS.oneCategory;
    return 1 - ((n - 1) * observed) / expected;
  };
}

/**
 * Krippendorff's alpha, by the coincidence matrix of Krippendorff (2011, "Computing
 * Krippendorff's Alpha-Reliability"): 1 − observed disagreement / disagreement expected by chance,
 * where a disagreement is the squared distance of two labels at the level of measurement:
 * `nominal` 1 when they differ; `ordinal` by how many labels lie between them; `interval` their
 * difference; `ratio` their difference over their sum. Any number of raters, missing labels
 * allowed: items with fewer than two labels carry no pair and are left out.
 */
export function krippendorffAlpha(
  ratings: Ratings,
  level: MeasurementLevel,
  options: EstimateOptions & ScaleOptions = {},
): Estimate {
  const c = code(ratings, options.categories);
  const numeric = c.categories.every((v) => typeof v === 'number');
  if (level === 'ordinal' && !ordered(c, options)) return undefinedEstimate(REASONS.needsOrder);
  if ((level === 'interval' || level === 'ratio') && !numeric) return undefinedEstimate(REASONS.needsNumbers);
  if (level === 'ratio' && (c.categories as readonly number[]).some((v) => v < 0))
    return undefinedEstimate(REASONS.needsNonNegative);
  return estimate(c.items, alphaOver(c, level), options);
}

/** One rater's agreement with the other raters of the same items. */
export interface RaterAgreement {
  /** The rater's column. */
  rater: number;
  /** Items the rater labelled. */
  labelled: number;
  /** Of the other raters' labels on the items this rater labelled, the share equal to this rater's. */
  with_others: Estimate;
  /** Of the items this rater labelled where the other raters have one most frequent label, the share where this rater gave it. */
  with_majority: Estimate;
  /** Items that had such a majority among the others. */
  majority_items: number;
}

/** The single most frequent category of item i among the labels of raters other than the one who gave `own`, or -1. */
function othersMajority(c: Coded, i: number, own: number): number {
  const K = c.categories.length;
  let best = -1;
  let bestCount = 0;
  let tie = false;
  for (const k of c.present[i]) {
    const count = c.counts[i * K + k] - (k === own ? 1 : 0);
    if (count > bestCount) [best, bestCount, tie] = [k, count, false];
    else if (count === bestCount && count > 0) tie = true;
  }
  return tie ? -1 : best;
}

/**
 * Each rater's agreement with the others: with their labels pair by pair (pooled over the items
 * the rater labelled), and with the others' majority where they have one; each with a bootstrap
 * interval over items when a seed is given.
 */
export function raterAgreement(ratings: Ratings, options: EstimateOptions = {}): RaterAgreement[] {
  const c = code(ratings);
  const K = c.categories.length;
  return Array.from({ length: c.raters }, (_, r) => {
    const own = (i: number) => c.codes[i * c.raters + r];
    const withOthers: OverItems = (indices) => {
      let equal = 0;
      let others = 0;
      for (let t = 0; t < indices.length; t++) {
        const i = indices[t];
        if (own(i) < 0) continue;
        equal += c.counts[i * K + own(i)] - 1;
        others += c.labelled[i] - 1;
      }
      return others === 0 ? REASONS.noOverlap : equal / others;
    };
    const majority = (indices: Int32Array) => {
      let agree = 0;
      let counted = 0;
      for (let t = 0; t < indices.length; t++) {
        const i = indices[t];
        if (own(i) < 0) continue;
        const m = othersMajority(c, i, own(i));
        if (m < 0) continue;
        counted++;
        if (m === own(i)) agree++;
      }
      return { agree, counted };
    };
    const withMajority: OverItems = (indices) => {
      const { agree, counted } = majority(indices);
      return counted === 0 ? REASONS.noMajority : agree / counted;
    };
    const everyItem = allItems(c.items);
    return {
      rater: r,
      labelled: everyItem.filter((i) => own(i) >= 0).length,
      with_others: estimate(c.items, withOthers, options),
      with_majority: estimate(c.items, withMajority, options),
      majority_items: majority(everyItem).counted,
    };
  });
}

/** An item the raters labelled differently, with how many gave each label. */
export interface Disagreement {
  item: number;
  /** Most frequent first; ties in the order of the categories. */
  labels: Array<{ value: RatingValue; count: number }>;
}

/** The items with at least two labels that are not all the same, in item order. */
export function disagreements(ratings: Ratings, options: ScaleOptions = {}): Disagreement[] {
  const c = code(ratings, options.categories);
  const K = c.categories.length;
  const found: Disagreement[] = [];
  for (let i = 0; i < c.items; i++) {
    if (c.present[i].length < 2) continue;
    const labels = [...c.present[i]]
      .map((k) => ({ k, count: c.counts[i * K + k] }))
      .sort((x, y) => y.count - x.count || x.k - y.k)
      .map(({ k, count }) => ({ value: c.categories[k], count }));
    found.push({ item: i, labels });
  }
  return found;
}

export interface AgreementReport {
  items: number;
  raters: number;
  /** Items labelled by at least two raters: those agreement is measured on. */
  rated_items: number;
  percent_agreement: Estimate;
  /** Two raters: Cohen's kappa (weighted as asked); more: not defined (see fleiss_kappa). */
  cohens_kappa: Estimate;
  fleiss_kappa: Estimate;
  krippendorff_alpha: Estimate;
  per_rater: RaterAgreement[];
  disagreements: Disagreement[];
}

/**
 * Every agreement figure of one table at once, the intervals drawn from the same seed:
 * `level` is the scale's level of measurement for alpha; `weights` Cohen's weights (two raters).
 */
export function agreementReport(
  ratings: Ratings,
  options: EstimateOptions & ScaleOptions & { level: MeasurementLevel; weights?: KappaWeights },
): AgreementReport {
  const c = code(ratings, options.categories);
  const cohen =
    c.raters === 2
      ? cohensKappa(
          ratings.map((row) => row[0]),
          ratings.map((row) => row[1]),
          options,
        )
      : undefinedEstimate(REASONS.twoRaters);
  return {
    items: c.items,
    raters: c.raters,
    rated_items: c.labelled.filter((m) => m >= 2).length,
    percent_agreement: estimate(c.items, percentAgreementOver(c), options),
    cohens_kappa: cohen,
    fleiss_kappa: estimate(c.items, fleissOver(c), options),
    krippendorff_alpha: krippendorffAlpha(ratings, options.level, options),
    per_rater: raterAgreement(ratings, options),
    disagreements: disagreements(ratings, options),
  };
}
