import { describe, expect, it } from '@jest/globals';
import { bootstrapMeanInterval, quantileSorted, seedFromText, Xoshiro128 } from './bootstrap.js';

describe('bootstrapMeanInterval', () => {
  it('is reproducible: the same differences and seed give the same interval, another seed another one', () => {
    const differences = [0.1, -0.2, 0.3, 0.05, 0, 0.4, -0.1, 0.25, 0.15, -0.05];
    const seed = seedFromText('base:candidate|exact_match');
    const a = bootstrapMeanInterval(differences, seed);
    expect(bootstrapMeanInterval(differences, seed)).toEqual(a);
    expect(bootstrapMeanInterval(differences, seed + 1)).not.toEqual(a);
    expect(a!.low).toBeLessThan(0.09);
    expect(a!.high).toBeGreaterThan(0.09);
  });

  it('collapses onto a constant difference and is null without pairs', () => {
    expect(bootstrapMeanInterval([0.25, 0.25, 0.25], 7)).toEqual({ low: 0.25, high: 0.25 });
    expect(bootstrapMeanInterval([], 7)).toBeNull();
  });

  it('covers the true mean delta at about the stated 95% on simulated paired data (seeded: cannot flake)', () => {
    // 400 simulated comparisons of 60 pairs: base ~ U(0, 1), candidate = base + 0.05 + noise with a skewed
    // (exponential minus its mean) error, so the true mean delta is exactly 0.05.
    const random = new Xoshiro128(20240519);
    const uniform = () => (random.nextUint32() + 0.5) / 4294967296;
    const trials = 400;
    const n = 60;
    const trueDelta = 0.05;
    let covered = 0;
    for (let t = 0; t < trials; t++) {
      const differences: number[] = [];
      for (let i = 0; i < n; i++) {
        const base = uniform();
        const noise = 0.2 * (-Math.log(uniform()) - 1);
        differences.push(base + trueDelta + noise - base);
      }
      const interval = bootstrapMeanInterval(differences, seedFromText(`simulation ${t}`), 0.95, 1000)!;
      if (interval.low <= trueDelta && trueDelta <= interval.high) covered++;
    }
    // Binomial(400, 0.95) has sd 1.1 points; the percentile bootstrap runs slightly narrow at n = 60.
    const coverage = covered / trials;
    expect(coverage).toBeGreaterThanOrEqual(0.92);
    expect(coverage).toBeLessThanOrEqual(0.98);
  });
});

describe('Xoshiro128', () => {
  it('matches the reference xoshiro128** output for a known state, and is uniform enough to index with', () => {
    // Reference (xoshiro128starstar.c, Blackman & Vigna) from state {1, 2, 3, 4}: 11520, 0, 5927040, 70819200.
    const g = new Xoshiro128(0);
    Object.assign(g, { a: 1, b: 2, c: 3, d: 4 });
    expect([g.nextUint32(), g.nextUint32(), g.nextUint32(), g.nextUint32()]).toEqual([11520, 0, 5927040, 70819200]);
    const h = new Xoshiro128(seedFromText('uniformity'));
    const counts = new Array(10).fill(0);
    for (let i = 0; i < 100_000; i++) counts[Math.floor(h.nextFloat() * 10)]++;
    // Chi-square with 9 degrees of freedom: 27.9 is its 0.999 quantile.
    const chi = counts.reduce((sum, c) => sum + (c - 10_000) ** 2 / 10_000, 0);
    expect(chi).toBeLessThan(27.9);
  });
});

describe('quantileSorted', () => {
  it("interpolates like NumPy's default (linear, type 7)", () => {
    // numpy.quantile([1, 2, 3, 4], 0.25) == 1.75
    expect(quantileSorted([1, 2, 3, 4], 0.25)).toBe(1.75);
    expect(quantileSorted([1, 2, 3, 4], 1)).toBe(4);
    expect(quantileSorted([5], 0.975)).toBe(5);
  });
});
