/**
 * Paired significance tests for comparing two runs row by row, and Holm's correction across a
 * family of them. The distributions come from stdlib (exact signed-rank and binomial tails); this
 * file fixes the conventions: two-sided, zero differences dropped, p-values capped at 1.
 */
import { lazyRequire } from '#libs/common/lazy-require.js';

// Some 700 modules between them: loaded when a diff first needs them, not at every start.
const binomialTest = lazyRequire<typeof import('@stdlib/stats-binomial-test')>('@stdlib/stats-binomial-test');
const wilcoxon = lazyRequire<typeof import('@stdlib/stats-wilcoxon')>('@stdlib/stats-wilcoxon');

// Bound once: global lookups are slow inside jest's sandbox.
const { abs, ceil, log2, max, min, round } = Math;

/** Binary digits paired differences keep below the largest value compared (2^-40 is about 1e-12): see pairedDifferences. */
export const DIFFERENCE_BITS = 40;

/**
 * Paired differences `candidate[i] - base[i]`, each rounded to a multiple of one quantum: 2^-40
 * of the power of two at or above the largest magnitude among all the values compared (about 12
 * significant digits of it). Float subtraction makes equal changes unequal in the last bit
 * (`2/3 - 1` is -0.33333333333333337, `1/3 - 0` is 0.3333333333333333), and a rank test would
 * rank them apart; on one quantum they are exact opposites and tie, as they must. A difference
 * below half a quantum (rounding noise such as `0.1 + 0.2 - 0.3`) becomes 0. The quantum is a
 * power of two, so differences such as 1, 0.5 or 100.25 stay exact.
 */
export function pairedDifferences(base: readonly number[], candidate: readonly number[]): number[] {
  let scale = 0;
  for (let i = 0; i < base.length; i++) scale = max(scale, abs(base[i]), abs(candidate[i]));
  const raw = candidate.map((c, i) => c - base[i]);
  if (scale === 0 || !Number.isFinite(scale)) return raw;
  const quantum = 2 ** (ceil(log2(scale)) - DIFFERENCE_BITS);
  // The same multiple of the same quantum is the same float, whatever path led to it; `|| 0` turns -0 into 0.
  return raw.map((d) => round(d / quantum) * quantum || 0);
}

export interface PairedTestResult {
  test: 'wilcoxon_signed_rank' | 'mcnemar_exact';
  /** `exact`: the exact null distribution; `normal_approximation`: with continuity and tie correction. */
  method: 'exact' | 'normal_approximation';
  /** Wilcoxon: the smaller of the positive and negative rank sums (SciPy's two-sided statistic); McNemar: the smaller discordant count. */
  statistic: number;
  p_value: number;
  /** Differences (Wilcoxon) or discordant pairs (McNemar) that carried information. */
  informative: number;
}

/** Signed-rank test and its matched-pairs rank-biserial correlation. */
export interface SignedRankResult extends PairedTestResult {
  /** Sum of the ranks of the positive differences (R's V). */
  rank_sum_positive: number;
  rank_sum_negative: number;
  /** (W+ - W-) / (W+ + W-), in -1..1; 0 when every difference is zero (Kerby 2014). */
  rank_biserial: number;
}

/**
 * Two-sided Wilcoxon signed-rank test of paired differences against 0. Zero differences are
 * dropped (Wilcoxon's method, SciPy's and R's default); the exact distribution is used when at
 * most 50 differences remain and none tie and none were zero, the normal approximation with a
 * continuity correction and the tie-corrected variance otherwise (as R's wilcox.test). Ties are
 * exact equality of |difference|: form differences of computed scores with pairedDifferences.
 * Every difference zero: no evidence of a change, p = 1.
 */
export function wilcoxonSignedRank(differences: readonly number[]): SignedRankResult {
  const nonZero = differences.filter((d) => d !== 0);
  const n = nonZero.length;
  if (n === 0)
    return {
      test: 'wilcoxon_signed_rank',
      method: 'exact',
      statistic: 0,
      p_value: 1,
      informative: 0,
      rank_sum_positive: 0,
      rank_sum_negative: 0,
      rank_biserial: 0,
    };
  const total = (n * (n + 1)) / 2;
  const zeros = differences.length - n;
  if (n === 1) {
    // stdlib needs two values; one difference has the exact two-sided p of 1 (ranks 1 of 1).
    const positive = nonZero[0] > 0 ? 1 : 0;
    return {
      test: 'wilcoxon_signed_rank',
      method: zeros > 0 ? 'normal_approximation' : 'exact',
      statistic: 0,
      p_value: 1,
      informative: 1,
      rank_sum_positive: positive,
      rank_sum_negative: 1 - positive,
      rank_biserial: positive ? 1 : -1,
    };
  }
  const ties = new Set(nonZero.map(abs)).size !== n;
  // Zeros included: stdlib drops them and, as R, leaves the exact distribution when there were any.
  const result = wilcoxon()([...differences], { alternative: 'two-sided', zeroMethod: 'wilcox', correction: true });
  const positive = result.statistic;
  const negative = total - positive;
  return {
    test: 'wilcoxon_signed_rank',
    method: n > 50 || ties || zeros > 0 ? 'normal_approximation' : 'exact',
    statistic: min(positive, negative),
    // The exact two-sided tail doubles a one-sided one, which passes 1 at the centre of the distribution.
    p_value: min(1, result.pValue),
    informative: n,
    rank_sum_positive: positive,
    rank_sum_negative: negative,
    rank_biserial: (positive - negative) / total,
  };
}

/**
 * Exact (conditional) McNemar test of paired verdicts: of the discordant pairs, `worse` went from
 * pass to fail and `better` from fail to pass; under no change each is Binomial(worse + better,
 * 1/2). Two-sided, p = min(1, 2 * P(X <= min)). No discordant pair: p = 1.
 */
export function mcnemarExact(worse: number, better: number): PairedTestResult {
  const discordant = worse + better;
  const smaller = min(worse, better);
  if (discordant === 0) return { test: 'mcnemar_exact', method: 'exact', statistic: 0, p_value: 1, informative: 0 };
  const result = binomialTest()(smaller, discordant, { p: 0.5, alternative: 'two-sided' });
  return {
    test: 'mcnemar_exact',
    method: 'exact',
    statistic: smaller,
    p_value: min(1, result.pValue),
    informative: discordant,
  };
}

/**
 * Holm's step-down adjusted p-values, in the order given: sort ascending, multiply the i-th
 * smallest (0-based) by (m - i), keep them monotone, cap at 1. `null` entries are not tests and
 * stay null; m counts the others.
 */
export function holmAdjust(pValues: ReadonlyArray<number | null>): Array<number | null> {
  const tested = pValues.map((p, i) => ({ p, i })).filter((e): e is { p: number; i: number } => e.p !== null);
  tested.sort((a, b) => a.p - b.p || a.i - b.i);
  const m = tested.length;
  const adjusted: Array<number | null> = pValues.map(() => null);
  let running = 0;
  tested.forEach((e, rank) => {
    running = Math.max(running, min(1, (m - rank) * e.p));
    adjusted[e.i] = running;
  });
  return adjusted;
}
