import { describe, expect, it } from '@jest/globals';
import { Xoshiro128 } from './bootstrap.js';
import { tCritical, tMeanInterval } from './mean-interval.js';

describe('tMeanInterval', () => {
  it("uses Student's t quantiles (the table's values) and is the point when the SD is 0", () => {
    // Two-sided 95%: 12.706 at 1 degree of freedom, 2.262 at 9, 1.984 at 100 (any t table).
    expect(tCritical(1, 0.95)).toBeCloseTo(12.7062, 4);
    expect(tCritical(9, 0.95)).toBeCloseTo(2.2622, 4);
    expect(tCritical(100, 0.95)).toBeCloseTo(1.984, 3);
    // n = 10, mean 0.6, sd 0.2: 0.6 ± 2.2622 · 0.2 / √10 = 0.6 ± 0.14307.
    const interval = tMeanInterval(0.6, 0.2, 10)!;
    expect(interval.low).toBeCloseTo(0.45693, 5);
    expect(interval.high).toBeCloseTo(0.74307, 5);
    expect(tMeanInterval(0.5, 0, 4)).toEqual({ low: 0.5, high: 0.5 });
    expect(tMeanInterval(0.5, null, 1)).toBeNull();
    expect(tMeanInterval(0.5, 0.1, 1)).toBeNull();
  });

  it('covers the true mean at 95% ± 2 points in 2,000 seeded samples of 5 normal and 40 skewed scores', () => {
    const random = new Xoshiro128(4242);
    const uniform = () => (random.nextUint32() + 0.5) / 4294967296;
    // Box–Muller: a standard normal from two uniforms.
    const normal = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
    const coverage = (n: number, draw: () => number, truth: number) => {
      let covered = 0;
      for (let t = 0; t < 2000; t++) {
        const xs = Array.from({ length: n }, draw);
        const mean = xs.reduce((a, b) => a + b, 0) / n;
        const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
        const interval = tMeanInterval(mean, sd, n)!;
        if (interval.low <= truth && truth <= interval.high) covered++;
      }
      return covered / 2000;
    };
    // Normal scores (mean 0.7, sd 0.1): exact at any n, so n = 5 (where a z interval covers some 88%).
    const small = coverage(5, () => 0.7 + 0.1 * normal(), 0.7);
    // Scores of a judge in [0, 1], skewed towards 1 (Beta-like: the square root of a uniform, mean 2/3).
    const skewed = coverage(40, () => Math.sqrt(uniform()), 2 / 3);
    for (const covered of [small, skewed]) {
      expect(covered).toBeGreaterThanOrEqual(0.93);
      expect(covered).toBeLessThanOrEqual(0.97);
    }
  });
});
