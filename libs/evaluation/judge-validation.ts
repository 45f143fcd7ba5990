/**
 * A judged metric's validation against human labels, as the service keeps it: the per-item pairs
 * (judge verdict and score against the human label) and what the statistics library makes of
 * them (libs/evaluation/statistics/judge-validity.ts, agreement.ts, corrected-rate.ts); the
 * paired comparison of two validations on the items they share; and the corrected pass rate of a
 * run's metric. Pure: the catalogues and runs families store and read; nothing is computed twice.
 */
import { fleissKappa, percentAgreement, type Estimate } from './statistics/agreement.js';
import { correctedPassRateFromValidation, type CorrectedRate } from './statistics/corrected-rate.js';
import {
  binaryValidity,
  binaryValidityByGroup,
  compareJudges,
  scoreValidity,
  type BinaryValidity,
  type ConfusionMatrix,
  type JudgeComparison,
  type Proportion,
} from './statistics/judge-validity.js';

/** At most this many pairs are kept with a validation (and taken from a run or a request). */
export const MAX_VALIDATION_PAIRS = 10_000;
/** A validation needs at least this many items with both a judge verdict and a human label. */
export const MIN_VALIDATION_PAIRS = 10;
/** Human reviewers' labels per item counted for their agreement with each other (the ceiling). */
export const MAX_REVIEWERS = 10;

/** One item: the judge's verdict and score beside the human label. */
export interface JudgePair {
  /** The item's key: the run row's id. */
  item: string;
  judge_passed: boolean | null;
  /** The judge's raw score (a rubric's 1..5, say). */
  judge_score: number | null;
  judge_label: string | null;
  human_passed: boolean | null;
  /** A numeric human label, on the judge's scale. */
  human_score: number | null;
  /** The row's dimension values. */
  dimensions: Record<string, string | null>;
  /** Each reviewer's verdict, when several reviewers labelled the item. */
  reviews?: Array<boolean | null>;
}

/** A share with its Wilson interval, or null and why. */
export interface RateFigure {
  value: number | null;
  successes: number;
  trials: number;
  interval: { low: number; high: number } | null;
  reason: string | null;
}

/** A statistic with its percentile bootstrap interval, or null and why. */
export interface EstimateFigure {
  value: number | null;
  interval: { low: number; high: number } | null;
  reason: string | null;
}

export interface BinaryFigures {
  confusion: ConfusionMatrix;
  true_positive_rate: RateFigure;
  true_negative_rate: RateFigure;
  accuracy: RateFigure;
  kappa: EstimateFigure;
}

export interface JudgeValidationResult extends BinaryFigures {
  level: number;
  /** Numeric scales: the judge's scores against the human scores; null without numeric human labels. */
  scores: { items: number; spearman: EstimateFigure; mean_absolute_error: EstimateFigure } | null;
  /** The same figures per value of one dimension; null when none was asked. */
  by_dimension: { dimension: string; groups: Array<BinaryFigures & { value: string }> } | null;
  /** How far the human reviewers agree with each other (the ceiling a judge can reach); null with one reviewer. */
  human_agreement: {
    reviewers: number;
    items: number;
    fleiss_kappa: EstimateFigure;
    percent_agreement: EstimateFigure;
  } | null;
}

function rate(p: Proportion): RateFigure {
  return {
    value: p.value,
    successes: p.successes,
    trials: p.trials,
    interval: p.interval && { low: p.interval.low, high: p.interval.high },
    reason: p.reason,
  };
}

function figure(e: Estimate): EstimateFigure {
  return { value: e.value, interval: e.interval && { low: e.interval.low, high: e.interval.high }, reason: e.reason };
}

function binaryFigures(v: BinaryValidity): BinaryFigures {
  return {
    confusion: v.confusion,
    true_positive_rate: rate(v.sensitivity),
    true_negative_rate: rate(v.specificity),
    accuracy: rate(v.accuracy),
    kappa: figure(v.kappa),
  };
}

/** The figures of a validation from its pairs: the bootstrap intervals (kappa, rho, MAE) drawn from `seed`. */
export function validationResult(
  pairs: readonly JudgePair[],
  options: { level: number; seed: number; dimension?: string | null },
): JudgeValidationResult {
  const estimate = { confidence: options.level, seed: options.seed };
  const judge = pairs.map((p) => p.judge_passed);
  const human = pairs.map((p) => p.human_passed);
  const numeric = pairs.some((p) => p.human_score !== null && p.judge_score !== null);
  const scores = numeric
    ? scoreValidity(
        pairs.map((p) => p.judge_score),
        pairs.map((p) => p.human_score),
        estimate,
      )
    : null;
  const dimension = options.dimension ?? null;
  const reviewed = pairs.filter((p) => (p.reviews?.length ?? 0) > 1);
  const reviewers = reviewed.reduce((most, p) => Math.max(most, p.reviews!.length), 0);
  const ratings = reviewed.map((p) => p.reviews!.map((v) => (v == null ? null : v ? 'pass' : 'fail')));
  return {
    level: options.level,
    ...binaryFigures(binaryValidity(judge, human, estimate)),
    scores: scores && {
      items: scores.items,
      spearman: figure(scores.spearman),
      mean_absolute_error: figure(scores.mean_absolute_error),
    },
    by_dimension:
      dimension === null
        ? null
        : {
            dimension,
            groups: binaryValidityByGroup(
              pairs.map((p) => p.dimensions[dimension] ?? null),
              judge,
              human,
              estimate,
            ).map((g) => ({ value: g.group, ...binaryFigures(g.validity) })),
          },
    human_agreement:
      reviewers < 2
        ? null
        : {
            reviewers,
            items: ratings.length,
            fleiss_kappa: figure(fleissKappa(ratings, estimate)),
            percent_agreement: figure(percentAgreement(ratings, estimate)),
          },
  };
}

/** Two validations on the items both hold a verdict of, against the base's human labels. */
export interface PairedJudgeComparison extends Omit<JudgeComparison, 'accuracy_a' | 'accuracy_b'> {
  accuracy_base: RateFigure;
  accuracy_candidate: RateFigure;
  /** Items both validations hold. */
  shared_items: number;
  /** Shared items whose human labels differ between the two validations: left out. */
  human_label_conflicts: number;
}

/**
 * Whether the candidate judge (say, a new rubric version) is right more often than the base on
 * the items both were validated on: McNemar's exact test (compareJudges) on those items, the
 * human label the one both validations agree on (items whose labels differ are left out, counted).
 */
export function comparePairs(
  base: readonly JudgePair[],
  candidate: readonly JudgePair[],
  level = 0.95,
): PairedJudgeComparison {
  const other = new Map(candidate.map((p) => [p.item, p]));
  const a: Array<boolean | null> = [];
  const b: Array<boolean | null> = [];
  const human: Array<boolean | null> = [];
  let shared = 0;
  let conflicts = 0;
  for (const p of base) {
    const q = other.get(p.item);
    if (!q) continue;
    shared++;
    if (p.human_passed !== q.human_passed) {
      conflicts++;
      continue;
    }
    a.push(p.judge_passed);
    b.push(q.judge_passed);
    human.push(p.human_passed);
  }
  const { accuracy_a, accuracy_b, ...rest } = compareJudges(a, b, human, { confidence: level });
  return {
    ...rest,
    accuracy_base: rate(accuracy_a),
    accuracy_candidate: rate(accuracy_b),
    shared_items: shared,
    human_label_conflicts: conflicts,
  };
}

/** A run metric's pass rate corrected for its judge's validated errors, as answers show it. */
export interface CorrectedPassRate {
  /** The corrected estimate, or null (see `reason`). */
  pass_rate: number | null;
  /** The judge's own (observed) pass rate over the same rows. */
  observed: number | null;
  interval: { low: number; high: number } | null;
  level: number;
  method: 'rogan_gladen_lang_reiczigel';
  /** `to_zero` / `to_one`: the estimate fell outside [0, 1] and was set to its bound. */
  clipped: 'none' | 'to_zero' | 'to_one' | null;
  validation_id: string;
  sensitivity: number | null;
  specificity: number | null;
  reason: string | null;
}

/** The corrected pass rate of `passed` of `total` verdicts, from the validation's confusion matrix. */
export function correctedFigure(
  passed: number,
  total: number,
  validation: { id: string; confusion: ConfusionMatrix },
  level = 0.95,
): CorrectedPassRate {
  const r: CorrectedRate = correctedPassRateFromValidation(passed, total, validation.confusion, level);
  const base = { level, method: 'rogan_gladen_lang_reiczigel' as const, validation_id: validation.id };
  if (r.value === null)
    return {
      ...base,
      pass_rate: null,
      observed: total ? passed / total : null,
      interval: null,
      clipped: null,
      sensitivity: null,
      specificity: null,
      reason: r.reason,
    };
  return {
    ...base,
    pass_rate: r.value,
    observed: r.observed,
    interval: r.interval && { low: r.interval.low, high: r.interval.high },
    clipped: r.clipped,
    sensitivity: r.sensitivity,
    specificity: r.specificity,
    reason: null,
  };
}
