/**
 * The mean of a sample with Student's t interval, from the summary a database answers (n, mean,
 * sample SD), so a window of a million scores never leaves the database to be summed up.
 */
import { lazyRequire } from '#libs/common/lazy-require.js';
import type { Interval } from './bootstrap.js';

const tQuantile = lazyRequire<typeof import('@stdlib/stats-base-dists-t-quantile')>(
  '@stdlib/stats-base-dists-t-quantile',
);

/** The t of a two-sided interval at this level with `df` degrees of freedom: 2.262 for 0.95 and 9. */
export function tCritical(df: number, level: number): number {
  return tQuantile()((1 + level) / 2, df);
}

/**
 * mean ± t(n - 1) · sd / √n: the interval that covers the population mean at its level when the
 * scores are near normal, and close to it for sums of bounded scores of a few dozen and more
 * (the central limit theorem). Null below two scores (no spread to measure) or without an SD; an
 * SD of 0 gives the point.
 */
export function tMeanInterval(mean: number, sd: number | null, n: number, level = 0.95): Interval | null {
  if (n < 2 || sd === null || !Number.isFinite(sd)) return null;
  const half = (tCritical(n - 1, level) * sd) / Math.sqrt(n);
  return { low: mean - half, high: mean + half };
}
