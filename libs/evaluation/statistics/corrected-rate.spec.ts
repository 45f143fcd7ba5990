import { describe, expect, it } from '@jest/globals';
import { Xoshiro128 } from './bootstrap.js';
import {
  correctedPassRate,
  correctedPassRateFromValidation,
  roganGladen,
  type CorrectedRateInput,
} from './corrected-rate.js';

function input(passed: number, total: number, se: [number, number], sp: [number, number]): CorrectedRateInput {
  return {
    passed,
    total,
    sensitivity: { successes: se[0], trials: se[1] },
    specificity: { successes: sp[0], trials: sp[1] },
  };
}

describe('Rogan-Gladen', () => {
  it('recovers the true rate from the rate a judge of known errors reports (worked by hand)', () => {
    // True pass rate 0.2, Se 0.9, Sp 0.8: the judge passes 0.2 x 0.9 + 0.8 x 0.2 = 0.34 of the items.
    // (0.34 + 0.8 - 1) / (0.9 + 0.8 - 1) = 0.14 / 0.7 = 0.2.
    expect(roganGladen(0.34, 0.9, 0.8)).toBeCloseTo(0.2, 12);
    const rate = correctedPassRate(input(340, 1000, [90, 100], [80, 100]));
    if (rate.value === null) throw new Error(rate.reason);
    expect(rate).toEqual(
      expect.objectContaining({ observed: 0.34, sensitivity: 0.9, specificity: 0.8, clipped: 'none' }),
    );
    expect(rate.value).toBeCloseTo(0.2, 12);
    expect(rate.interval!.low).toBeLessThan(0.2);
    expect(rate.interval!.high).toBeGreaterThan(0.2);
    expect(rate.interval).toEqual(expect.objectContaining({ method: 'lang_reiczigel_2014', level: 0.95 }));
  });

  it("carries the validation's uncertainty: a validation ten times larger gives a narrower interval", () => {
    const small = correctedPassRate(input(340, 1000, [90, 100], [80, 100]));
    const large = correctedPassRate(input(340, 1000, [900, 1000], [800, 1000]));
    const width = (r: typeof small) => (r.value === null ? NaN : r.interval!.high - r.interval!.low);
    expect(width(large)).toBeLessThan(width(small) * 0.75);
  });

  it('clips to [0, 1] and says so', () => {
    // 5 of 200 passed is fewer than the 10% a judge of Sp 0.9 passes of failing items alone: (0.025 - 0.1) / 0.7 < 0.
    const low = correctedPassRate(input(5, 200, [40, 50], [45, 50]));
    expect(low).toEqual(expect.objectContaining({ value: 0, clipped: 'to_zero' }));
    if (low.value === null) throw new Error(low.reason);
    expect(low.unclipped).toBeCloseTo(-0.075 / 0.7, 12);
    expect(low.interval).toEqual(expect.objectContaining({ low: 0, clipped_low: true }));
    expect(correctedPassRate(input(190, 200, [40, 50], [45, 50]))).toEqual(
      expect.objectContaining({ value: 1, clipped: 'to_one' }),
    );
  });

  it('is undefined, with the reason, when the judge tells nothing or a count is missing', () => {
    expect(roganGladen(0.5, 0.5, 0.5)).toBeNull();
    expect(correctedPassRate(input(50, 100, [10, 20], [10, 20])).reason).toMatch(/sensitivity \+ specificity/);
    expect(correctedPassRate(input(0, 0, [1, 1], [1, 1])).reason).toMatch(/no rated item/);
    expect(correctedPassRate(input(1, 2, [0, 0], [1, 1])).reason).toMatch(/no item humans passed/);
    expect(correctedPassRate(input(1, 2, [1, 1], [0, 0])).reason).toMatch(/no item humans failed/);
  });

  it("takes the validation as the judge's confusion matrix", () => {
    const validation = { true_positive: 90, false_negative: 10, true_negative: 80, false_positive: 20, items: 200 };
    expect(correctedPassRateFromValidation(340, 1000, validation)).toEqual(
      correctedPassRate(input(340, 1000, [90, 100], [80, 100])),
    );
  });
});

describe('the Lang-Reiczigel interval in 1,000 seeded simulations per setting', () => {
  const random = new Xoshiro128(977);
  const binomial = (n: number, p: number) => {
    let k = 0;
    for (let i = 0; i < n; i++) if (random.nextFloat() < p) k++;
    return k;
  };
  /** Share of simulated runs and validations whose interval holds the true rate. */
  function coverage(total: number, truth: number, se: number, sp: number, positives: number, negatives: number) {
    const observed = truth * se + (1 - truth) * (1 - sp);
    let covered = 0;
    for (let t = 0; t < 1000; t++) {
      const rate = correctedPassRate(
        input(
          binomial(total, observed),
          total,
          [binomial(positives, se), positives],
          [binomial(negatives, sp), negatives],
        ),
      );
      if (rate.value !== null && rate.interval && rate.interval.low <= truth && truth <= rate.interval.high) covered++;
    }
    return covered / 1000;
  }

  // [items in the run, true rate, Se, Sp, human passes, human fails in the validation]: measured 95.4%, 95.7%, 94.3%.
  it.each([
    [500, 0.3, 0.85, 0.9, 100, 100],
    [1000, 0.1, 0.9, 0.95, 50, 150],
    [200, 0.5, 0.8, 0.8, 60, 60],
  ])('covers the true rate at 95%% ± 2 points: run of %i, rate %d, Se %d, Sp %d, validation %i + %i', (...setting) => {
    const covered = coverage(...setting);
    expect(covered).toBeGreaterThanOrEqual(0.93);
    expect(covered).toBeLessThanOrEqual(0.97);
  });

  it('is conservative, not short, near a rate of 0 with a small validation (measured 98.8%)', () => {
    // In the same setting the plain delta-method interval covered 69% of 1,000 runs.
    expect(coverage(1000, 0.02, 0.9, 0.97, 40, 40)).toBeGreaterThanOrEqual(0.95);
  });
});
