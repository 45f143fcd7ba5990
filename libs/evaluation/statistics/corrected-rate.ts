/**
 * The true pass rate of a run, corrected for its judge's known errors: a judge that passes some
 * failing items and fails some passing ones reports a pass rate that is off, by an amount its
 * validation against human labels (sensitivity and specificity) tells.
 */
import type { Interval } from './bootstrap.js';
import { normalCritical, type ConfusionMatrix } from './judge-validity.js';

const { max, min, sqrt } = Math;

/** Successes of trials, e.g. of the items humans passed (trials), how many the judge passed (successes). */
export interface Count {
  successes: number;
  trials: number;
}

export interface CorrectedRateInput {
  /** Items of the run the judge passed. */
  passed: number;
  /** Items of the run the judge rated. */
  total: number;
  /** From the judge's validation: of the items humans passed, how many the judge passed. */
  sensitivity: Count;
  /** From the judge's validation: of the items humans failed, how many the judge failed. */
  specificity: Count;
}

/** The interval of the corrected rate: Lang & Reiczigel (2014), clipped to [0, 1]. */
export interface CorrectedRateInterval extends Interval {
  method: 'lang_reiczigel_2014';
  level: number;
  /** A bound that fell outside [0, 1] and was set to 0 or 1. */
  clipped_low: boolean;
  clipped_high: boolean;
}

export type CorrectedRate =
  | {
      /** The corrected pass rate, in [0, 1]. */
      value: number;
      /** Rogan-Gladen before clipping: below 0 or above 1 when the judge passed fewer (or more) items than its error rates make possible. */
      unclipped: number;
      clipped: 'none' | 'to_zero' | 'to_one';
      /** The judge's pass rate in the run. */
      observed: number;
      sensitivity: number;
      specificity: number;
      /** Null when the validation is too small for the adjusted estimates to tell passes from fails (their sensitivity + specificity ≤ 1). */
      interval: CorrectedRateInterval | null;
      reason: null;
    }
  | { value: null; reason: string };

/**
 * Rogan & Gladen (1978): the true pass rate π from the observed pass rate p of a judge with
 * sensitivity Se and specificity Sp, solving p = π·Se + (1 − π)·(1 − Sp):
 * π = (p + Sp − 1) / (Se + Sp − 1). Unclipped; null when Se + Sp ≤ 1 (the judge tells passes from
 * fails no better than a coin, and its verdicts carry no information about π).
 */
export function roganGladen(observed: number, sensitivity: number, specificity: number): number | null {
  const youden = sensitivity + specificity - 1;
  return youden <= 0 ? null : (observed + specificity - 1) / youden;
}

/**
 * The interval of Lang & Reiczigel (2014, "Confidence limits for prevalence of disease adjusted
 * for estimated sensitivity and specificity", Preventive Veterinary Medicine 113:13-22, eqs. 4, 6,
 * 7, 16, 17): the delta-method (Wald) interval of the Rogan-Gladen estimate, whose variance adds
 * the run's binomial variance to those of the validated Se and Sp, computed on adjusted counts —
 * z²/2 passes and fails added to the run (Agresti & Coull 1998), one pass and one fail to each of
 * Se and Sp (Agresti & Caffo 2000) — and its centre shifted by a bias term. Chosen over the plain
 * delta method (Rogan & Gladen 1978; Greenland 1996), which under-covers when a count is small or
 * a rate is near 0 or 1, as in the small validations of a review queue. It was developed for
 * Se, Sp ≥ 0.5; the simulations in corrected-rate.spec.ts measure its coverage here.
 * Null when the adjusted Se + Sp ≤ 1.
 */
export function langReiczigelInterval(input: CorrectedRateInput, level = 0.95): CorrectedRateInterval | null {
  const z = normalCritical(level);
  const z2 = z * z;
  const nSe = input.sensitivity.trials + 2;
  const nSp = input.specificity.trials + 2;
  const se = (input.sensitivity.successes + 1) / nSe;
  const sp = (input.specificity.successes + 1) / nSp;
  const nRun = input.total + z2;
  const observed = (input.passed + z2 / 2) / nRun;
  const youden = se + sp - 1;
  if (youden <= 0) return null;
  const rate = (observed + sp - 1) / youden;
  const varSe = (se * (1 - se)) / nSe;
  const varSp = (sp * (1 - sp)) / nSp;
  const shift = 2 * z2 * (rate * varSe - (1 - rate) * varSp);
  const variance = ((observed * (1 - observed)) / nRun + rate * rate * varSe + (1 - rate) ** 2 * varSp) / youden ** 2;
  const low = rate + shift - z * sqrt(variance);
  const high = rate + shift + z * sqrt(variance);
  return {
    method: 'lang_reiczigel_2014',
    level,
    low: min(1, max(0, low)),
    high: min(1, max(0, high)),
    clipped_low: low < 0,
    clipped_high: high > 1,
  };
}

/**
 * The run's true pass rate corrected for the judge's errors (Rogan-Gladen), clipped to [0, 1]
 * with the clipping reported, and the Lang-Reiczigel interval, which carries the uncertainty of
 * both the run (its items) and the validation (its numbers of human passes and fails). Null with
 * the reason when the run or a side of the validation has no items, or when the validated
 * Se + Sp ≤ 1.
 */
export function correctedPassRate(input: CorrectedRateInput, level = 0.95): CorrectedRate {
  if (input.total === 0) return { value: null, reason: 'the run has no rated item' };
  if (input.sensitivity.trials === 0) return { value: null, reason: 'the validation has no item humans passed' };
  if (input.specificity.trials === 0) return { value: null, reason: 'the validation has no item humans failed' };
  const observed = input.passed / input.total;
  const sensitivity = input.sensitivity.successes / input.sensitivity.trials;
  const specificity = input.specificity.successes / input.specificity.trials;
  const unclipped = roganGladen(observed, sensitivity, specificity);
  if (unclipped === null)
    return {
      value: null,
      reason: 'the judge does not tell passes from fails: its sensitivity + specificity is at most 1',
    };
  return {
    value: min(1, max(0, unclipped)),
    unclipped,
    clipped: unclipped < 0 ? 'to_zero' : unclipped > 1 ? 'to_one' : 'none',
    observed,
    sensitivity,
    specificity,
    interval: langReiczigelInterval(input, level),
    reason: null,
  };
}

/** correctedPassRate with the judge's validation given as its confusion matrix against human labels. */
export function correctedPassRateFromValidation(
  passed: number,
  total: number,
  validation: ConfusionMatrix,
  level = 0.95,
): CorrectedRate {
  const { true_positive: tp, false_positive: fp, true_negative: tn, false_negative: fn } = validation;
  return correctedPassRate(
    {
      passed,
      total,
      sensitivity: { successes: tp, trials: tp + fn },
      specificity: { successes: tn, trials: tn + fp },
    },
    level,
  );
}
