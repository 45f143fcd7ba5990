/** Descriptive statistics shared by run summaries and diffs. Pure functions over plain or typed arrays. */
import type { Histogram } from './run.types.js';

/** Numbers in order: a plain array, or a typed one (the summaries of large runs keep their values in Float64Arrays). */
export type Numbers = ArrayLike<number>;

// Bound once: global lookups are slow inside jest's sandbox and these run per value.
const { ceil, floor, max, min, sqrt, round } = Math;
const { isFinite: finite } = Number;

const HISTOGRAM_BINS = 10;

export function mean(values: Numbers): number | null {
  if (values.length === 0) return null;
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i];
  return sum / values.length;
}

/** Ascending copy; the input is left as is. */
export function sortAscending(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Nearest-rank percentile (p in (0, 1]) of an ascending array: the value at rank ceil(p * n). */
export function nearestRank(sorted: Numbers, p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[min(sorted.length, max(1, ceil(p * sorted.length))) - 1];
}

/** Median of an ascending array, averaging the two middle values when n is even. */
export function median(sorted: Numbers): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  const mid = floor(n / 2);
  return n % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Population standard deviation around a known mean. */
export function populationStd(values: Numbers, centre: number): number {
  let squares = 0;
  for (let i = 0; i < values.length; i++) {
    const d = values[i] - centre;
    squares += d * d;
  }
  return sqrt(squares / values.length);
}

/** Ten equal-width bins over [lo, hi] of an ascending array, the last bin closed; one bin when lo == hi. */
export function histogram(sorted: Numbers): Histogram {
  const n = sorted.length;
  if (n === 0) return { edges: [], counts: [] };
  const lo = sorted[0];
  const hi = sorted[n - 1];
  if (lo === hi) return { edges: [lo, hi], counts: [n] };
  const width = (hi - lo) / HISTOGRAM_BINS;
  const edges: number[] = [];
  // (hi - lo) * i / bins rounds once, so edges such as 0.3 come out exact where i * width would not.
  for (let i = 0; i < HISTOGRAM_BINS; i++) edges.push(lo + ((hi - lo) * i) / HISTOGRAM_BINS);
  edges.push(hi);
  const counts = new Array<number>(HISTOGRAM_BINS).fill(0);
  for (let i = 0; i < n; i++) {
    const v = sorted[i];
    let bin = min(HISTOGRAM_BINS - 1, floor((v - lo) / width));
    // Floating-point division can land one bin off the stored edges; the edges are authoritative.
    if (bin < HISTOGRAM_BINS - 1 && v >= edges[bin + 1]) bin++;
    else if (bin > 0 && v < edges[bin]) bin--;
    counts[bin]++;
  }
  return { edges, counts };
}

/** passed / (passed + failed), null when nothing was counted. */
export function rate(passed: number, failed: number): number | null {
  const total = passed + failed;
  return total === 0 ? null : passed / total;
}

/** Rounds to 1e-9 so sums of currency amounts do not carry float noise. */
export function roundNano(value: number): number {
  return round(value * 1e9) / 1e9;
}

export function isScore(value: number | null | undefined): value is number {
  return typeof value === 'number' && finite(value);
}

/**
 * The value a metric reports on its one documented scale: the score normalised to 0..1 where the
 * metric has a scale (judged rubrics, labels, 0..1 metrics), else the raw score (latency, counts).
 * Summaries, diffs and the results table use it; the raw score stays beside it.
 */
export function reportedScore(entry: { score: number | null; normalized?: number | null } | undefined): number | null {
  if (entry === undefined) return null;
  if (isScore(entry.normalized)) return entry.normalized;
  return isScore(entry.score) ? entry.score : null;
}
