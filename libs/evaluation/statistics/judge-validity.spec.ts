import { describe, expect, it } from '@jest/globals';
import { Xoshiro128 } from './bootstrap.js';
import {
  binaryValidity,
  binaryValidityByGroup,
  compareJudges,
  confusionMatrix,
  scoreValidity,
  scoreValidityByGroup,
  spearmanRho,
  wilsonInterval,
} from './judge-validity.js';
import { mcnemarExact } from './paired-tests.js';

describe('wilsonInterval', () => {
  it('gives the Wilson intervals of Newcombe (1998, Statistics in Medicine 17:857-872, Table II, method 3)', () => {
    const cases: Array<[number, number, number, number]> = [
      [81, 263, 0.2553, 0.3662],
      [15, 148, 0.0624, 0.1605],
      [0, 20, 0, 0.1611],
      [1, 29, 0.0061, 0.1718],
    ];
    for (const [successes, trials, low, high] of cases) {
      const interval = wilsonInterval(successes, trials)!;
      expect(interval.low).toBeCloseTo(low, 4);
      expect(interval.high).toBeCloseTo(high, 4);
    }
    expect(wilsonInterval(0, 0)).toBeNull();
    expect(wilsonInterval(20, 20)!.high).toBe(1);
  });
});

describe('binaryValidity', () => {
  // Six items; the judge gave no verdict on the last.
  const judge = [true, true, false, false, true, null];
  const human = [true, false, false, true, true, true];

  it('counts the confusion matrix and the rates of a worked example', () => {
    expect(confusionMatrix(judge, human)).toEqual({
      true_positive: 2,
      false_positive: 1,
      true_negative: 1,
      false_negative: 1,
      items: 5,
    });
    const v = binaryValidity(judge, human);
    expect(v.sensitivity).toEqual(expect.objectContaining({ value: 2 / 3, successes: 2, trials: 3 }));
    expect(v.sensitivity.interval).toEqual(wilsonInterval(2, 3));
    expect(v.specificity.value).toBe(0.5);
    expect(v.accuracy.value).toBe(0.6);
    // po = 3/5; both pass 3/5 of the items, so pe = 0.36 + 0.16 = 0.52; kappa = 0.08 / 0.48.
    expect(v.kappa.value).toBeCloseTo(1 / 6, 12);
    expect(v.kappa.interval).toBeNull();
  });

  it('says why a rate is undefined, and bootstraps kappa reproducibly from the seed', () => {
    const allPass = binaryValidity([true, false], [true, true]);
    expect(allPass.specificity).toEqual(expect.objectContaining({ value: null, interval: null, trials: 0 }));
    expect(allPass.specificity.reason).toMatch(/humans failed no item/);
    const one = binaryValidity(judge, human, { seed: 9, resamples: 300 });
    expect(binaryValidity(judge, human, { seed: 9, resamples: 300 })).toEqual(one);
    expect(one.kappa.interval).toEqual(expect.objectContaining({ resamples: 300, level: 0.95 }));
  });

  it('covers the true positive and true negative rates at 95% ± 2 points (Wilson) in 1,000 seeded simulations', () => {
    // 300 items, humans pass 40%; the judge passes 85% of those (TPR) and fails 75% of the others
    // (TNR): some 120 positives and 180 negatives per validation. Measured: 95.7% and 96.3%; under 2 s.
    const random = new Xoshiro128(31337);
    let tpr = 0;
    let tnr = 0;
    for (let t = 0; t < 1000; t++) {
      const humans: boolean[] = [];
      const verdicts: boolean[] = [];
      for (let i = 0; i < 300; i++) {
        const pass = random.nextFloat() < 0.4;
        humans.push(pass);
        verdicts.push(random.nextFloat() < (pass ? 0.85 : 0.25));
      }
      const { sensitivity, specificity } = binaryValidity(verdicts, humans);
      if (sensitivity.interval!.low <= 0.85 && 0.85 <= sensitivity.interval!.high) tpr++;
      if (specificity.interval!.low <= 0.75 && 0.75 <= specificity.interval!.high) tnr++;
    }
    for (const covered of [tpr, tnr]) {
      expect(covered / 1000).toBeGreaterThanOrEqual(0.93);
      expect(covered / 1000).toBeLessThanOrEqual(0.97);
    }
  });
});

describe('scoreValidity', () => {
  it("gives Spearman's rho with tied ranks averaged, and the mean absolute error", () => {
    // Ranks of x: 1, 2.5, 2.5, 4; of y: 1, 3, 2, 4. Their covariance 4.5 over sqrt(4.5 x 5): 0.9487.
    expect(spearmanRho([1, 2, 2, 3], [1, 3, 2, 4])).toBeCloseTo(4.5 / Math.sqrt(22.5), 12);
    expect(spearmanRho([1, 1, 1], [1, 2, 3])).toBeNull();
    const v = scoreValidity([1, 2, 2, 3, null], [1, 3, 2, 4, 5], { seed: 4, resamples: 200 });
    expect(v.items).toBe(4);
    expect(v.spearman.value).toBeCloseTo(0.9487, 4);
    // |1-1| + |2-3| + |2-2| + |3-4| = 2 over 4 items.
    expect(v.mean_absolute_error.value).toBe(0.5);
    expect(v.mean_absolute_error.interval!.low).toBeGreaterThanOrEqual(0);
    expect(v.mean_absolute_error.interval!.high).toBeLessThanOrEqual(1);
    expect(scoreValidity([3, 3], [1, 2]).spearman.reason).toMatch(/single score/);
    expect(scoreValidity([null], [1]).mean_absolute_error.reason).toMatch(/no item/);
  });
});

describe('per group', () => {
  it('measures each dimension value on its own items, seeded apart', () => {
    const groups = ['en', 'fr', 'en', null, 'fr', 'en'];
    const judge = [true, false, true, true, true, false];
    const human = [true, false, false, true, true, false];
    const by = binaryValidityByGroup(groups, judge, human, { seed: 3, resamples: 100 });
    expect(by.map((g) => g.group)).toEqual(['(none)', 'en', 'fr']);
    const en = by.find((g) => g.group === 'en')!.validity;
    expect(en.confusion).toEqual(confusionMatrix([true, true, false], [true, false, false]));
    expect(en.accuracy.value).toBeCloseTo(2 / 3, 12);
    const scores = scoreValidityByGroup(['a', 'a', 'b', 'b'], [1, 2, 3, 5], [1, 3, 3, 4]);
    expect(scores.map((g) => [g.group, g.validity.mean_absolute_error.value])).toEqual([
      ['a', 0.5],
      ['b', 0.5],
    ]);
  });
});

describe('compareJudges', () => {
  it("tests the two judges' correctness with McNemar's exact test on the items only one got right", () => {
    const human = [true, true, true, true, true, true, false, false, false, false];
    // a is wrong on the first six, b right on all: six discordant items, all for b.
    const a = [false, false, false, false, false, false, false, false, false, null];
    const b = [true, true, true, true, true, true, false, false, false, false];
    const c = compareJudges(a, b, human);
    expect(c).toEqual(expect.objectContaining({ items: 9, only_a_correct: 0, only_b_correct: 6 }));
    expect(c.difference).toBeCloseTo(6 / 9, 12);
    // Two-sided exact: 2 x P(X <= 0) for X ~ Binomial(6, 1/2) = 2/64.
    expect(c.mcnemar).toEqual(mcnemarExact(0, 6));
    expect(c.mcnemar.p_value).toBeCloseTo(0.03125, 12);
    expect(compareJudges([], [], []).difference).toBeNull();
  });
});
