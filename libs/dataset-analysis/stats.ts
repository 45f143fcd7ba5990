/** Summaries and histograms the analyses report. */
const { floor, ceil, min, max } = Math;

export interface Summary {
  count: number;
  mean: number | null;
  median: number | null;
  p90: number | null;
  min: number | null;
  max: number | null;
}

export interface Histogram {
  /** bins[i] covers [edges[i], edges[i+1]); the last bin includes its upper edge. */
  edges: number[];
  counts: number[];
}

/** Nearest-rank percentile of sorted values. */
function rank(sorted: number[], p: number): number {
  return sorted[max(0, ceil(p * sorted.length) - 1)];
}

export function summary(values: number[]): Summary {
  if (!values.length) return { count: 0, mean: null, median: null, p90: null, min: null, max: null };
  const sorted = [...values].sort((a, b) => a - b);
  const total = sorted.reduce((s, v) => s + v, 0);
  return {
    count: sorted.length,
    mean: round(total / sorted.length),
    median: rank(sorted, 0.5),
    p90: rank(sorted, 0.9),
    min: sorted[0],
    max: sorted[sorted.length - 1],
  };
}

export function histogram(values: number[], bins = 10): Histogram {
  if (!values.length) return { edges: [], counts: [] };
  const lo = min(...values);
  const hi = max(...values);
  if (lo === hi) return { edges: [lo, hi], counts: [values.length] };
  const width = (hi - lo) / bins;
  const counts = new Array<number>(bins).fill(0);
  for (const v of values) counts[min(bins - 1, floor((v - lo) / width))]++;
  return { edges: Array.from({ length: bins + 1 }, (_, i) => round(lo + ((hi - lo) * i) / bins)), counts };
}

export function round(x: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
