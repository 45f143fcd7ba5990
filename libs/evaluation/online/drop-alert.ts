/**
 * Whether an evaluator's pass rate has dropped: a recent window's passes (x1 of n1) against a
 * reference window's (x0 of n0), and a small state machine over successive evaluations so that an
 * alert neither fires on one unlucky window nor flaps on noise.
 *
 * One evaluation asks a one-sided question (is the recent share lower?) with Fisher's exact test
 * where the counts are small and the pooled two-proportion z-test where they are large, and
 * carries its evidence: the counts, both shares with Wilson intervals, the difference with
 * Newcombe's interval, the p-value and the test used. Below `min_samples` in either window there is
 * no verdict, and a drop smaller than `min_drop` is never a breach, however significant.
 */
import { lazyRequire } from '#libs/common/lazy-require.js';
import type { Interval } from '#libs/evaluation/statistics/bootstrap.js';
import { proportion, type Proportion } from '#libs/evaluation/statistics/judge-validity.js';

const hypergeometricCdf = lazyRequire<typeof import('@stdlib/stats-base-dists-hypergeometric-cdf')>(
  '@stdlib/stats-base-dists-hypergeometric-cdf',
);
const normalCdf = lazyRequire<typeof import('@stdlib/stats-base-dists-normal-cdf')>(
  '@stdlib/stats-base-dists-normal-cdf',
);

const { max, min, sqrt } = Math;

/** Passes of trials in one window. */
export interface WindowCount {
  passes: number;
  trials: number;
}

export interface DropRule {
  /** A window with fewer scored traces gives no verdict. */
  min_samples: number;
  /** The smallest drop in pass rate (reference share minus recent share, in [0, 1]) that can fire. */
  min_drop: number;
  /** A breach needs p < alpha. */
  alpha: number;
  /** A firing alert counts towards resolving when p >= alpha_resolve (greater than alpha). */
  alpha_resolve: number;
  /** Consecutive breaches that fire the alert. */
  fire_after: number;
  /** Consecutive calm evaluations that resolve it. */
  resolve_after: number;
  /** Level of the intervals in the evidence; 0.95 unless set. */
  level?: number;
}

export type DropTest = 'fisher_exact' | 'two_proportion_z';

/** What an evaluation found, with the figures behind it. */
export interface DropEvidence {
  recent: Proportion;
  reference: Proportion;
  /** Recent share minus reference share (negative for a drop), with Newcombe's hybrid score interval. */
  difference: { value: number; interval: Interval };
  /** One-sided: the chance of a recent share this low or lower if both windows had the same rate. */
  p_value: number;
  test: DropTest;
}

export type DropEvaluation =
  | ({ verdict: 'breach' | 'calm' | 'inconclusive'; reason: null } & DropEvidence)
  | { verdict: 'no_verdict'; reason: string; recent: WindowCount; reference: WindowCount };

/**
 * One-sided Fisher's exact test on [[x1, n1 - x1], [x0, n0 - x0]]: given the total passes, the
 * recent window's passes are hypergeometric (population n0 + n1, x0 + x1 passes in it, n1 drawn).
 * `less` is P(X <= x1), the test for a drop; `greater` is P(X >= x1), computed as the lower tail
 * of the recent window's failures so that neither tail is 1 minus a near-1 sum. SciPy's
 * `fisher_exact(table, alternative=...)`.
 */
export function fisherExactOneSided(recent: WindowCount, reference: WindowCount, side: 'less' | 'greater'): number {
  const total = recent.trials + reference.trials;
  const passes = recent.passes + reference.passes;
  const p =
    side === 'less'
      ? hypergeometricCdf()(recent.passes, total, passes, recent.trials)
      : hypergeometricCdf()(recent.trials - recent.passes, total, total - passes, recent.trials);
  return min(1, p);
}

/**
 * The pooled two-proportion z-test for a drop: z = (p1 - p0) / sqrt(p (1 - p) (1/n1 + 1/n0)) with
 * p the pooled share, one-sided p = Phi(z). Null when every trial passed or every one failed (no
 * variance: no evidence of a drop).
 */
export function twoProportionZLess(recent: WindowCount, reference: WindowCount): number | null {
  const pooled = (recent.passes + reference.passes) / (recent.trials + reference.trials);
  const variance = pooled * (1 - pooled) * (1 / recent.trials + 1 / reference.trials);
  if (variance === 0) return null;
  const z = (recent.passes / recent.trials - reference.passes / reference.trials) / sqrt(variance);
  return normalCdf()(z, 0, 1);
}

/**
 * The test for this table: Fisher's exact test when any expected cell count (under equal rates)
 * is below 5, where the normal approximation is poor (Cochran's rule); the z-test otherwise,
 * where the two agree closely and the z-test keeps its level better (Fisher's is conservative).
 */
export function chooseDropTest(recent: WindowCount, reference: WindowCount): DropTest {
  const total = recent.trials + reference.trials;
  const passes = recent.passes + reference.passes;
  const fewest = min(passes, total - passes) * (min(recent.trials, reference.trials) / total);
  return fewest < 5 ? 'fisher_exact' : 'two_proportion_z';
}

/**
 * Newcombe's hybrid score interval for p1 - p0 (Newcombe 1998, method 10): from each share's
 * Wilson interval (l, u), low = d - sqrt((p1 - l1)^2 + (u0 - p0)^2) and
 * high = d + sqrt((u1 - p1)^2 + (p0 - l0)^2). Null when a window is empty.
 */
export function newcombeInterval(recent: WindowCount, reference: WindowCount, level = 0.95): Interval | null {
  const one = proportion(recent.passes, recent.trials, 'empty', level);
  const zero = proportion(reference.passes, reference.trials, 'empty', level);
  if (one.value === null || zero.value === null) return null;
  const d = one.value - zero.value;
  const low = d - sqrt((one.value - one.interval.low) ** 2 + (zero.interval.high - zero.value) ** 2);
  const high = d + sqrt((one.interval.high - one.value) ** 2 + (zero.value - zero.interval.low) ** 2);
  return { low: max(-1, low), high: min(1, high) };
}

/**
 * One evaluation: `breach` (p < alpha and a drop of at least min_drop), `calm` (p >= alpha_resolve),
 * `inconclusive` (in between, or significant but smaller than min_drop), or `no_verdict` below
 * min_samples in either window. Counts that are not whole numbers with 0 <= passes <= trials, or
 * a rule without 0 < alpha < alpha_resolve <= 1, are a RangeError (the caller's mistake, not data).
 */
export function evaluateDrop(recent: WindowCount, reference: WindowCount, rule: DropRule): DropEvaluation {
  for (const { passes, trials } of [recent, reference]) {
    if (!(Number.isInteger(passes) && Number.isInteger(trials) && passes >= 0 && passes <= trials)) {
      throw new RangeError(`a window's passes are a whole number from 0 to its trials; got ${passes} of ${trials}`);
    }
  }
  if (!(rule.alpha > 0 && rule.alpha < rule.alpha_resolve && rule.alpha_resolve <= 1)) {
    throw new RangeError(`0 < alpha < alpha_resolve <= 1 is required; got ${rule.alpha} and ${rule.alpha_resolve}`);
  }
  const short = [recent.trials < rule.min_samples && 'recent', reference.trials < rule.min_samples && 'reference']
    .filter(Boolean)
    .join(' and ');
  if (short) {
    const reason = `the ${short} ${short.includes(' and ') ? 'windows have' : 'window has'} fewer than ${rule.min_samples} scored traces (recent ${recent.trials}, reference ${reference.trials})`;
    return { verdict: 'no_verdict', reason, recent, reference };
  }
  const level = rule.level ?? 0.95;
  const test = chooseDropTest(recent, reference);
  const p_value =
    test === 'fisher_exact'
      ? fisherExactOneSided(recent, reference, 'less')
      : (twoProportionZLess(recent, reference) ?? 1);
  const recentShare = proportion(recent.passes, recent.trials, 'empty', level);
  const referenceShare = proportion(reference.passes, reference.trials, 'empty', level);
  const value = recent.passes / recent.trials - reference.passes / reference.trials;
  // Both windows have trials (checked above), so the interval is defined.
  const difference = { value, interval: newcombeInterval(recent, reference, level) as Interval };
  const verdict =
    p_value < rule.alpha && -value >= rule.min_drop
      ? 'breach'
      : p_value >= rule.alpha_resolve
        ? 'calm'
        : 'inconclusive';
  return { verdict, reason: null, recent: recentShare, reference: referenceShare, difference, p_value, test };
}

/** Where an alert stands, and the streaks that move it. */
export interface AlertState {
  status: 'ok' | 'firing';
  /** Consecutive breaches so far (while ok). */
  breaches: number;
  /** Consecutive calm evaluations so far (while firing). */
  calms: number;
}

export const INITIAL_ALERT_STATE: AlertState = { status: 'ok', breaches: 0, calms: 0 };

/**
 * The alert after one more evaluation. While ok, it fires on the `fire_after`-th breach in a row;
 * while firing, it resolves on the `resolve_after`-th calm evaluation in a row (p >= alpha_resolve,
 * a stricter bar than alpha's, so a p-value hovering near alpha neither resolves nor re-fires).
 * Any other evaluation, including one without a verdict, breaks the streak.
 */
export function nextAlertState(previous: AlertState, evaluation: DropEvaluation, rule: DropRule): AlertState {
  if (previous.status === 'ok') {
    const breaches = evaluation.verdict === 'breach' ? previous.breaches + 1 : 0;
    return breaches >= rule.fire_after
      ? { status: 'firing', breaches: 0, calms: 0 }
      : { status: 'ok', breaches, calms: 0 };
  }
  const calms = evaluation.verdict === 'calm' ? previous.calms + 1 : 0;
  return calms >= rule.resolve_after
    ? { status: 'ok', breaches: 0, calms: 0 }
    : { status: 'firing', breaches: 0, calms };
}
