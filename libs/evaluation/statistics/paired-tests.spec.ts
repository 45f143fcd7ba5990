import { describe, expect, it } from '@jest/globals';
import { holmAdjust, mcnemarExact, pairedDifferences, wilcoxonSignedRank } from './paired-tests.js';

// Standard normal CDF via the complementary error function (Abramowitz & Stegun 7.1.26 is too
// coarse for 1e-6): a series good to 1e-12 for the values used here.
function normalCdf(z: number): number {
  // erf by its Taylor series, fine for |z| < 3.
  const x = z / Math.SQRT2;
  let term = x;
  let sum = x;
  for (let n = 1; n < 200; n++) {
    term *= (-x * x) / n;
    sum += term / (2 * n + 1);
  }
  return 0.5 * (1 + (2 / Math.sqrt(Math.PI)) * sum);
}

describe('wilcoxonSignedRank', () => {
  it("matches SciPy's documented example (scipy.stats.wilcoxon: Fisher's Design of Experiments data, exact)", () => {
    // https://docs.scipy.org/doc/scipy/reference/generated/scipy.stats.wilcoxon.html:
    // d = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]; wilcoxon(d) -> statistic 24.0, pvalue 0.041259765625
    const result = wilcoxonSignedRank([6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]);
    expect(result.method).toBe('exact');
    expect(result.statistic).toBe(24);
    expect(result.p_value).toBeCloseTo(0.041259765625, 12);
    expect(result.rank_sum_positive).toBe(96);
    // Matched-pairs rank-biserial (Kerby 2014): (96 - 24) / 120.
    expect(result.rank_biserial).toBeCloseTo(0.6, 12);
  });

  it("matches R's wilcox.test example (Hollander & Wolfe 1973, p. 29: depression scale, paired, exact)", () => {
    // ?wilcox.test in R: wilcox.test(x, y, paired = TRUE) -> V = 40, p-value = 0.03906 (two-sided; 0.01953 one-sided "greater").
    const x = [1.83, 0.5, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.3];
    const y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];
    const result = wilcoxonSignedRank(x.map((v, i) => v - y[i]));
    expect(result.rank_sum_positive).toBe(40);
    expect(result.statistic).toBe(5);
    expect(result.method).toBe('exact');
    expect(result.p_value).toBeCloseTo(0.0390625, 10);
  });

  it('drops zero differences and uses the tie-corrected normal approximation with continuity correction (Wikipedia example data)', () => {
    // en.wikipedia.org/wiki/Wilcoxon_signed-rank_test, "Example": pairs (125,110) (115,122) (130,125) (140,120) (140,140)
    // (115,124) (140,123) (125,137) (140,135) (135,145). One zero is dropped (n = 9), |5| ties twice.
    const pairs = [
      [125, 110],
      [115, 122],
      [130, 125],
      [140, 120],
      [140, 140],
      [115, 124],
      [140, 123],
      [125, 137],
      [140, 135],
      [135, 145],
    ];
    const result = wilcoxonSignedRank(pairs.map(([a, b]) => a - b));
    expect(result.informative).toBe(9);
    expect(result.method).toBe('normal_approximation');
    // Ranks of |d| = 5,5,7,9,10,12,15,17,20 are 1.5,1.5,3..9; positives 15,5,20,17,5 -> W+ = 7+1.5+9+8+1.5 = 27, W- = 18.
    expect(result.rank_sum_positive).toBe(27);
    expect(result.statistic).toBe(18);
    // mean n(n+1)/4 = 22.5; variance n(n+1)(2n+1)/24 - sum(t^3 - t)/48 = 71.25 - 6/48; continuity 0.5 toward the mean.
    const z = (27 - 22.5 - 0.5) / Math.sqrt(71.25 - 6 / 48);
    expect(result.p_value).toBeCloseTo(2 * (1 - normalCdf(z)), 10);
    expect(result.p_value).toBeCloseTo(0.6353, 4);
  });

  it('answers p = 1 without a change, and caps the exact two-sided p at 1', () => {
    expect(wilcoxonSignedRank([0, 0, 0])).toMatchObject({ p_value: 1, informative: 0, rank_biserial: 0 });
    expect(wilcoxonSignedRank([])).toMatchObject({ p_value: 1, informative: 0 });
    expect(wilcoxonSignedRank([0.2])).toMatchObject({ p_value: 1, informative: 1, rank_biserial: 1 });
    // W+ = 3 of 6 for ranks 1..3 sits at the centre; doubling a tail would give 1.25.
    expect(wilcoxonSignedRank([1, 2, -3]).p_value).toBe(1);
  });

  it('gives the smallest exact p for n all in one direction: 2 / 2^n', () => {
    expect(wilcoxonSignedRank([-1, -2, -3, -4, -5, -6]).p_value).toBeCloseTo(2 / 64, 12);
    expect(wilcoxonSignedRank([-1, -2, -3, -4, -5, -6]).rank_biserial).toBe(-1);
  });
});

/** R's normal approximation, written out: continuity 0.5 toward the mean, variance less sum(t^3 - t)/48 over tie groups. */
function tieCorrectedP(positiveRanks: number, n: number, tieGroups: number[]): number {
  const mean = (n * (n + 1)) / 4;
  const variance = (n * (n + 1) * (2 * n + 1)) / 24 - tieGroups.reduce((sum, t) => sum + t ** 3 - t, 0) / 48;
  const z = (positiveRanks - mean - 0.5 * Math.sign(positiveRanks - mean)) / Math.sqrt(variance);
  return 2 * (1 - normalCdf(Math.abs(z)));
}

describe('pairedDifferences', () => {
  it('makes equal changes reached along different float paths equal, and rounding noise zero', () => {
    // Averaged trials: one trial of three lost (1 -> 2/3) or gained (0 -> 1/3).
    expect(2 / 3 - 1).not.toBe(-(1 / 3 - 0));
    const [down, up, none] = pairedDifferences([1, 0, 0.3], [2 / 3, 1 / 3, 0.1 + 0.2]);
    expect(down).toBe(-up);
    expect(Math.abs(down - -1 / 3)).toBeLessThan(1e-11);
    expect(none).toBe(0);
  });

  it("keeps about 12 significant digits of the largest value, whatever the metric's scale, and exact changes exact", () => {
    // Latency in ms: 1,200.5 -> 1,300.75 and 2,000 -> 2,100.25 are the same +100.25.
    const [a, b] = pairedDifferences([1200.5, 2000], [1300.75, 2100.25]);
    expect(a).toBe(b);
    expect(a).toBe(100.25);
    expect(pairedDifferences([1, 0.25], [0, 0.75])).toEqual([-1, 0.5]);
    // A change in the 11th significant digit survives.
    expect(pairedDifferences([0.5], [0.50000000001])[0]).not.toBe(0);
    expect(pairedDifferences([0, 0], [0, 0])).toEqual([0, 0]);
  });
});

describe('wilcoxonSignedRank with ties of averaged trial scores', () => {
  // Three trials a row: `down` rows lost one trial (1 -> 2/3), `up` rows gained one (0 -> 1/3).
  const flaky = (down: number, up: number) =>
    pairedDifferences(
      [...Array<number>(down).fill(1), ...Array<number>(up).fill(0)],
      [...Array<number>(down).fill(2 / 3), ...Array<number>(up).fill(1 / 3)],
    );

  it('ranks every equal change equally: 8 down and 6 up is p = 0.618, rank-biserial -1/7', () => {
    const result = wilcoxonSignedRank(flaky(8, 6));
    expect(result.method).toBe('normal_approximation');
    // All 14 tie at the mean rank 7.5: W+ = 6 * 7.5 = 45, W- = 60.
    expect(result.rank_sum_positive).toBe(45);
    expect(result.rank_sum_negative).toBe(60);
    expect(result.rank_biserial).toBeCloseTo(-1 / 7, 12);
    expect(result.p_value).toBeCloseTo(tieCorrectedP(45, 14, [14]), 12);
    expect(result.p_value.toFixed(3)).toBe('0.618');
  });

  it('is not significant for 40 down and 25 up (p = 0.063), where ranking them apart gave 4e-7', () => {
    const result = wilcoxonSignedRank(flaky(40, 25));
    expect(result.rank_sum_positive).toBe(25 * 33);
    expect(result.p_value).toBeCloseTo(tieCorrectedP(825, 65, [65]), 12);
    expect(result.p_value.toFixed(3)).toBe('0.063');
  });

  it("leaves the exact distribution when zeros were dropped, as R's wilcox.test does", () => {
    // R: wilcox.test(c(0, 1, 2, 3, 4, 5, -6)) warns "cannot compute exact p-value with zeroes": V = 15, normal approximation.
    const result = wilcoxonSignedRank([0, 1, 2, 3, 4, 5, -6]);
    expect(result.informative).toBe(6);
    expect(result.method).toBe('normal_approximation');
    expect(result.rank_sum_positive).toBe(15);
    expect(result.p_value).toBeCloseTo(tieCorrectedP(15, 6, []), 12);
    // Without the zero the same differences are exact: 2 * P(V <= 6) for n = 6, 14 of the 64 sign patterns.
    expect(wilcoxonSignedRank([1, 2, 3, 4, 5, -6])).toMatchObject({ method: 'exact' });
    expect(wilcoxonSignedRank([1, 2, 3, 4, 5, -6]).p_value).toBeCloseTo(28 / 64, 12);
  });
});

describe('mcnemarExact', () => {
  it('matches the exact conditional McNemar p of Fagerland, Lydersen & Laake (2013), BMC Med Res Methodol 13:91, Table 1 (AHR: 1 vs 7 discordant)', () => {
    // Published: exact conditional p = 0.070 (2 * P(X <= 1), X ~ Bin(8, 1/2) = 18/256).
    const result = mcnemarExact(1, 7);
    expect(result.p_value).toBeCloseTo(18 / 256, 12);
    expect(result.p_value.toFixed(3)).toBe('0.070');
    expect(result.statistic).toBe(1);
    expect(result.informative).toBe(8);
  });

  it('is symmetric, 1 without discordant pairs, and capped at 1 when balanced', () => {
    expect(mcnemarExact(7, 1).p_value).toBe(mcnemarExact(1, 7).p_value);
    expect(mcnemarExact(0, 0).p_value).toBe(1);
    expect(mcnemarExact(3, 3).p_value).toBe(1);
    // All 12 discordant pairs one way: 2 / 2^12.
    expect(mcnemarExact(12, 0).p_value).toBeCloseTo(2 / 4096, 12);
  });
});

describe('holmAdjust', () => {
  it("matches Holm's step-down procedure (Wikipedia 'Holm–Bonferroni method' example; statsmodels multipletests(method='holm'))", () => {
    // p = 0.01, 0.04, 0.03, 0.005 -> adjusted 0.03, 0.06, 0.06, 0.02.
    const adjusted = holmAdjust([0.01, 0.04, 0.03, 0.005]);
    expect(adjusted.map((p) => Number(p!.toFixed(10)))).toEqual([0.03, 0.06, 0.06, 0.02]);
  });

  it('leaves untested entries out of the family and caps at 1', () => {
    expect(holmAdjust([0.02, null, 0.9, 0.6])).toEqual([0.06, null, 1, 1]);
    expect(holmAdjust([null])).toEqual([null]);
  });
});
