/**
 * Seeded paired bootstrap of a mean difference: the same differences and seed give the same
 * interval on every machine, so two requests for the same diff agree.
 */
import mt19937 from '@stdlib/random-base-mt19937';

const { floor } = Math;

/** 2^32: MT19937 draws integers in [0, 2^32). */
const UINT32_RANGE = 4294967296;

export const BOOTSTRAP_RESAMPLES = 2000;

export interface Interval {
  low: number;
  high: number;
}

/** A 32-bit seed from text (FNV-1a), never 0, which MT19937 seeding treats as unset in some ports. */
export function seedFromText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash === 0 ? 1 : hash;
}

/** Value at quantile q of an ascending array, linearly interpolated between order statistics (type 7, NumPy's default). */
export function quantileSorted(sorted: Float64Array | readonly number[], q: number): number {
  const position = (sorted.length - 1) * q;
  const lower = floor(position);
  const upper = Math.min(sorted.length - 1, lower + 1);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - lower);
}

/**
 * Percentile interval of the mean of paired differences: `resamples` times draw n of the n
 * differences with replacement (the pair is the unit, so the pairing is kept) and take the
 * (1 - level) / 2 and (1 + level) / 2 quantiles of the resampled means. Null for no differences.
 */
export function bootstrapMeanInterval(differences: readonly number[], seed: number, level = 0.95, resamples = BOOTSTRAP_RESAMPLES): Interval | null {
  const n = differences.length;
  if (n === 0) return null;
  const values = Float64Array.from(differences);
  const random = mt19937.factory({ seed });
  const scale = n / UINT32_RANGE;
  const means = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[floor(random() * scale)];
    means[b] = sum / n;
  }
  means.sort();
  return { low: quantileSorted(means, (1 - level) / 2), high: quantileSorted(means, (1 + level) / 2) };
}
