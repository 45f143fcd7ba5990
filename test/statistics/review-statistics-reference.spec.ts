import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  cohensKappa,
  fleissKappa,
  krippendorffAlpha,
  percentAgreement,
  raterAgreement,
  type Estimate,
  type MeasurementLevel,
} from '#libs/evaluation/statistics/agreement.js';
import { correctedPassRate } from '#libs/evaluation/statistics/corrected-rate.js';
import {
  binaryValidity,
  compareJudges,
  scoreValidity,
  type Proportion,
} from '#libs/evaluation/statistics/judge-validity.js';

/**
 * The review statistics against an independent computation: review-statistics-reference.py
 * computes them on seeded random tables (2 to 50 items, 2 to 5 raters, 2 to 5 categories, none or
 * 30% of the labels missing, raters who agree by chance only or mostly) from their definitions over
 * raw pairs of labels (Krippendorff's alpha by pairwise disagreements, not the coincidence matrix
 * the library uses; Cohen's kappa over every pair of the two raters' labels) and with SciPy
 * (Spearman's rho, Wilson intervals, McNemar's exact test). Its output is kept beside it, so the
 * comparison runs wherever the tests do; where Python has NumPy and SciPy, the script is run again
 * and must print that file (so the file cannot drift from the script).
 */
const folder = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname);
const script = join(folder, 'review-statistics-reference.py');
const reference = JSON.parse(readFileSync(join(folder, 'review-statistics-reference.json'), 'utf8')) as Reference;

type Value = number | null;
interface Reference {
  agreement: Array<{
    ratings: Array<Array<number | null>>;
    percent_agreement: Value;
    fleiss_kappa: Value;
    alpha: Record<MeasurementLevel, Value>;
    cohen: Record<'none' | 'linear' | 'quadratic', Value>;
    raters: Array<{ with_others: Value; with_majority: Value }>;
  }>;
  validity: Array<{
    judge: Array<boolean | null>;
    human: boolean[];
    other: boolean[];
    judge_score: Array<number | null>;
    human_score: number[];
    confusion: [number, number, number, number];
    sensitivity: [number, number] | null;
    specificity: [number, number] | null;
    accuracy: [number, number] | null;
    kappa: Value;
    mcnemar_p: number;
    spearman: Value;
    mean_absolute_error: Value;
  }>;
  corrected: Array<{ input: number[]; unclipped: number; interval: [number, number] }>;
}

const TOLERANCE = 1e-9;

function expectValue(actual: Estimate | Value, expected: Value, what: string): void {
  const value = actual !== null && typeof actual === 'object' ? actual.value : actual;
  if (expected === null) {
    expect({ what, value }).toEqual({ what, value: null });
    if (actual !== null && typeof actual === 'object') expect(actual.reason).toEqual(expect.any(String));
  } else {
    expect({ what, defined: value !== null }).toEqual({ what, defined: true });
    const close = Math.abs((value as number) - expected) < TOLERANCE;
    expect({ what, value, close }).toEqual({ what, value, close: true });
  }
}

function expectInterval(actual: Proportion, expected: [number, number] | null, what: string): void {
  expectValue(actual.interval?.low ?? null, expected?.[0] ?? null, `${what} low`);
  expectValue(actual.interval?.high ?? null, expected?.[1] ?? null, `${what} high`);
}

describe('review statistics against an independent computation (review-statistics-reference.py)', () => {
  it('agreement: percent, Fleiss, Krippendorff at four levels, Cohen plain and weighted, per rater, on 144 tables', () => {
    let defined = 0;
    reference.agreement.forEach((c, n) => {
      const a = c.ratings.map((row) => row[0]);
      const b = c.ratings.map((row) => row[1]);
      expectValue(percentAgreement(c.ratings), c.percent_agreement, `${n} percent`);
      expectValue(fleissKappa(c.ratings), c.fleiss_kappa, `${n} fleiss`);
      for (const level of ['nominal', 'ordinal', 'interval', 'ratio'] as const)
        expectValue(krippendorffAlpha(c.ratings, level), c.alpha[level], `${n} alpha ${level}`);
      for (const weights of ['none', 'linear', 'quadratic'] as const)
        expectValue(cohensKappa(a, b, { weights }), c.cohen[weights], `${n} cohen ${weights}`);
      raterAgreement(c.ratings).forEach((r, k) => {
        expectValue(r.with_others, c.raters[k].with_others, `${n} rater ${k} with others`);
        expectValue(r.with_majority, c.raters[k].with_majority, `${n} rater ${k} with majority`);
      });
      if (c.alpha.ordinal !== null) defined++;
    });
    // Most tables define every statistic; the small or one-category ones check the nulls.
    expect(reference.agreement).toHaveLength(144);
    expect(defined).toBeGreaterThan(120);
  });

  it('judge validity: confusion, Wilson intervals, kappa, Spearman, MAE and McNemar on 16 samples', () => {
    for (const [n, c] of reference.validity.entries()) {
      const validity = binaryValidity(c.judge, c.human);
      const { true_positive, false_positive, true_negative, false_negative } = validity.confusion;
      expect([true_positive, false_positive, true_negative, false_negative]).toEqual(c.confusion);
      expectInterval(validity.sensitivity, c.sensitivity, `${n} sensitivity`);
      expectInterval(validity.specificity, c.specificity, `${n} specificity`);
      expectInterval(validity.accuracy, c.accuracy, `${n} accuracy`);
      expectValue(validity.kappa, c.kappa, `${n} kappa`);
      expectValue(compareJudges(c.judge, c.other, c.human).mcnemar.p_value, c.mcnemar_p, `${n} mcnemar`);
      const scores = scoreValidity(c.judge_score, c.human_score);
      expectValue(scores.spearman, c.spearman, `${n} spearman`);
      expectValue(scores.mean_absolute_error, c.mean_absolute_error, `${n} mae`);
    }
  });

  it('corrected rate: Rogan-Gladen and the Lang-Reiczigel interval, clipped and not', () => {
    for (const c of reference.corrected) {
      const [passed, total, se, nSe, sp, nSp] = c.input;
      const rate = correctedPassRate({
        passed,
        total,
        sensitivity: { successes: se, trials: nSe },
        specificity: { successes: sp, trials: nSp },
      });
      if (rate.value === null) throw new Error(rate.reason);
      expectValue(rate.unclipped, c.unclipped, `${c.input} unclipped`);
      expectValue(rate.interval!.low, c.interval[0], `${c.input} low`);
      expectValue(rate.interval!.high, c.interval[1], `${c.input} high`);
    }
  });

  const python = spawnSync('python3', ['-c', 'import numpy, scipy'], { encoding: 'utf8' });
  (python.status === 0 ? it : it.skip)(
    'the kept reference is what the script prints (run where Python has NumPy and SciPy)',
    () => {
      const run = spawnSync('python3', [script], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
      expect(run.status).toBe(0);
      const fresh = JSON.parse(run.stdout) as Reference;
      // SciPy's last bits may differ between versions: the numbers agree within the tolerance.
      const flat = (r: Reference) =>
        JSON.stringify(r, (_, v) => (typeof v === 'number' ? Number(v.toPrecision(10)) : v));
      expect(flat(fresh)).toBe(flat(reference));
    },
    60_000,
  );
});
