/**
 * Seeded bootstraps: of a mean of paired differences, and of any statistic over items (agreement,
 * judge validity). The same data and seed give the same interval on every machine, so two requests
 * for the same figures agree.
 */
// Bound once: global lookups are slow inside jest's sandbox, and the generator runs in the innermost loop.
const { floor, imul, min } = Math;
const { isFinite } = Number;

export const BOOTSTRAP_RESAMPLES = 2000;

/** 2^32: the generator draws integers in [0, 2^32). */
const UINT32_RANGE = 4294967296;

export interface Interval {
  low: number;
  high: number;
}

/** A 32-bit seed from text (FNV-1a). */
export function seedFromText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * xoshiro128** (Blackman & Vigna 2018), its state filled from the seed by splitmix32: a small,
 * fast generator that passes BigCrush, written out because the bootstrap draws hundreds of
 * millions of indices on a large diff and a call per draw into a library generator cost many times more.
 */
export class Xoshiro128 {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
  }

  /** The next integer in [0, 2^32). */
  nextUint32(): number {
    const result = imul(rotl(imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** Uniform in [0, 1). */
  nextFloat(): number {
    return this.nextUint32() / UINT32_RANGE;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** Value at quantile q of an ascending array, linearly interpolated between order statistics (type 7, NumPy's default). */
export function quantileSorted(sorted: Float64Array | readonly number[], q: number): number {
  const position = (sorted.length - 1) * q;
  const lower = floor(position);
  const upper = min(sorted.length - 1, lower + 1);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - lower);
}

/**
 * Percentile interval of the mean of paired differences: `resamples` times draw n of the n
 * differences with replacement (the pair is the unit, so the pairing is kept) and take the
 * (1 - level) / 2 and (1 + level) / 2 quantiles of the resampled means. Null for no differences.
 */
export function bootstrapMeanInterval(
  differences: readonly number[],
  seed: number,
  level = 0.95,
  resamples = BOOTSTRAP_RESAMPLES,
): Interval | null {
  const n = differences.length;
  if (n === 0) return null;
  const values = Float64Array.from(differences);
  const random = new Xoshiro128(seed);
  const scale = n / UINT32_RANGE;
  const means = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[floor(random.nextUint32() * scale)];
    means[b] = sum / n;
  }
  means.sort();
  return { low: quantileSorted(means, (1 - level) / 2), high: quantileSorted(means, (1 + level) / 2) };
}

/** A percentile bootstrap interval and how it was drawn. */
export interface BootstrapInterval extends Interval {
  method: 'percentile_bootstrap';
  /** The confidence level, e.g. 0.95. */
  level: number;
  resamples: number;
  /** Resamples on which the statistic was undefined (say, every resampled item in one category): left out of the percentiles. */
  undefined_resamples: number;
}

/**
 * Percentile bootstrap over items of any statistic: `resamples` times draw n item indices out of
 * 0..n-1 with replacement, compute `statistic` on them (an index may come more than once: it
 * counts that many times), and take the (1 - level) / 2 and (1 + level) / 2 quantiles of the
 * results. Resamples where the statistic is undefined (null) are left out and counted; when more
 * than half of them are, there is no interval (null), nor for no items. The same n, statistic and
 * seed give the same interval.
 */
export function bootstrapItemsInterval(
  n: number,
  statistic: (indices: Int32Array) => number | null,
  seed: number,
  level = 0.95,
  resamples = BOOTSTRAP_RESAMPLES,
): BootstrapInterval | null {
  if (n === 0) return null;
  const random = new Xoshiro128(seed);
  const scale = n / UINT32_RANGE;
  const indices = new Int32Array(n);
  const values = new Float64Array(resamples);
  let defined = 0;
  for (let b = 0; b < resamples; b++) {
    for (let i = 0; i < n; i++) indices[i] = floor(random.nextUint32() * scale);
    const value = statistic(indices);
    if (value !== null && isFinite(value)) values[defined++] = value;
  }
  if (defined * 2 < resamples || defined === 0) return null;
  const sorted = values.subarray(0, defined).sort();
  return {
    method: 'percentile_bootstrap',
    level,
    resamples,
    undefined_resamples: resamples - defined,
    low: quantileSorted(sorted, (1 - level) / 2),
    high: quantileSorted(sorted, (1 + level) / 2),
  };
}

/** The indices 0..n-1: every item once, for the point estimate of a statistic written over item indices. */
export function allItems(n: number): Int32Array {
  return Int32Array.from({ length: n }, (_, i) => i);
}
