import type { kmeans as KMeans } from 'ml-kmeans';
import { round } from './stats.js';

const { sqrt, log, min, max, floor, abs } = Math;

/** mulberry32: a small seeded generator, so clustering and projection are the same for a seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Gaussian random projection to `dims` dimensions (Johnson-Lindenstrauss), then unit length: k-means and silhouettes stay fast on wide embeddings. */
export function reduce(vectors: ArrayLike<number>[], dims: number, seed: number): number[][] {
  const width = vectors[0]?.length ?? 0;
  if (width <= dims) return vectors.map((v) => unit(Array.from(v)));
  const random = seededRandom(seed ^ 0x9e3779b9);
  const gauss = () => sqrt(-2 * log(random() || 1e-12)) * Math.cos(2 * Math.PI * random());
  const matrix = Array.from({ length: dims }, () => Float64Array.from({ length: width }, gauss));
  return vectors.map((v) =>
    unit(
      matrix.map((row) => {
        let s = 0;
        for (let i = 0; i < width; i++) s += row[i] * v[i];
        return s;
      }),
    ),
  );
}

function unit(v: number[]): number[] {
  const norm = sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return v.map((x) => x / norm);
}

function dot(a: number[], b: number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Mean silhouette (cosine distance) over a deterministic sample of at most `sample` points. */
export function silhouette(
  points: number[][],
  assignments: number[],
  k: number,
  sample = 1000,
  seed = 1,
): number | null {
  if (k < 2) return null;
  const n = points.length;
  const random = seededRandom(seed);
  const chosen = n <= sample ? points.map((_, i) => i) : Array.from({ length: sample }, () => floor(random() * n));
  let total = 0;
  let counted = 0;
  for (const i of chosen) {
    const sums = new Array<number>(k).fill(0);
    const counts = new Array<number>(k).fill(0);
    for (const j of chosen) {
      if (i === j) continue;
      sums[assignments[j]] += 1 - dot(points[i], points[j]);
      counts[assignments[j]]++;
    }
    const own = assignments[i];
    if (!counts[own]) continue;
    const a = sums[own] / counts[own];
    let b = Infinity;
    for (let c = 0; c < k; c++) if (c !== own && counts[c]) b = min(b, sums[c] / counts[c]);
    if (b === Infinity) continue;
    total += (b - a) / max(a, b, 1e-12);
    counted++;
  }
  return counted ? round(total / counted) : null;
}

const K_SEARCH_SAMPLE = 2000;

function sampleOf(points: number[][], size: number, seed: number): number[][] {
  const random = seededRandom(seed ^ 0x27d4eb2d);
  const indexes = points.map((_, i) => i);
  for (let i = 0; i < size; i++) {
    const j = i + floor(random() * (indexes.length - i));
    [indexes[i], indexes[j]] = [indexes[j], indexes[i]];
  }
  return indexes
    .slice(0, size)
    .sort((a, b) => a - b)
    .map((i) => points[i]);
}

export interface KMeansResult {
  k: number;
  silhouette: number | null;
  assignments: number[];
  centroids: number[][];
  candidates: Array<{ k: number; silhouette: number | null }>;
}

/**
 * k-means++ (seeded); without `k`, every k from 2 to kMax is tried and the best mean silhouette wins.
 * `kmeans` is ml-kmeans's, which clusterTexts loads when it is first called (some 250 modules no start needs).
 */
export function clusterPoints(
  points: number[][],
  opts: { seed: number; k?: number; kMax?: number },
  kmeans: typeof KMeans,
): KMeansResult {
  const n = points.length;
  if (n < 3)
    return {
      k: 1,
      silhouette: null,
      assignments: points.map(() => 0),
      centroids: points.length ? [points[0]] : [],
      candidates: [],
    };
  const run = (k: number) => {
    const result = kmeans(points, k, { seed: opts.seed, initialization: 'kmeans++', maxIterations: 100 });
    return {
      k,
      assignments: result.clusters,
      centroids: result.centroids,
      silhouette: silhouette(points, result.clusters, k, 1000, opts.seed),
    };
  };
  if (opts.k) {
    const chosen = run(min(opts.k, n));
    return { ...chosen, candidates: [{ k: chosen.k, silhouette: chosen.silhouette }] };
  }
  const kMax = min(opts.kMax ?? 10, floor(sqrt(n)) + 1, n - 1);
  // k is chosen on a deterministic sample of a large set, then fitted once on every point.
  const sample = n > K_SEARCH_SAMPLE ? sampleOf(points, K_SEARCH_SAMPLE, opts.seed) : points;
  const search = (k: number) => {
    const result = kmeans(sample, k, { seed: opts.seed, initialization: 'kmeans++', maxIterations: 100 });
    return { k, silhouette: silhouette(sample, result.clusters, k, 1000, opts.seed) };
  };
  const tried = Array.from({ length: max(1, kMax - 1) }, (_, i) => search(i + 2));
  const best = tried.reduce((a, b) => ((b.silhouette ?? -2) > (a.silhouette ?? -2) + 1e-9 ? b : a));
  return { ...run(best.k), candidates: tried };
}

/** The first two principal components (power iteration on the centred points), scaled into [-1, 1] per axis. */
export function project2d(points: number[][], seed: number): Array<[number, number]> {
  const n = points.length;
  if (n === 0) return [];
  if (n === 1) return [[0, 0]];
  const d = points[0].length;
  const mean = new Array<number>(d).fill(0);
  for (const p of points) for (let i = 0; i < d; i++) mean[i] += p[i] / n;
  const centred = points.map((p) => p.map((x, i) => x - mean[i]));
  const random = seededRandom(seed ^ 0x5bd1e995);
  const components: number[][] = [];
  for (let c = 0; c < 2; c++) {
    let v = unit(Array.from({ length: d }, () => random() - 0.5));
    for (let iteration = 0; iteration < 50; iteration++) {
      const next = new Array<number>(d).fill(0);
      for (const p of centred) {
        const s = dot(p, v);
        for (let i = 0; i < d; i++) next[i] += s * p[i];
      }
      for (const prev of components) {
        const s = dot(next, prev);
        for (let i = 0; i < d; i++) next[i] -= s * prev[i];
      }
      v = unit(next);
    }
    components.push(v);
  }
  const coords = centred.map((p) => [dot(p, components[0]), dot(p, components[1])] as [number, number]);
  const scale = [0, 1].map((axis) => max(1e-12, ...coords.map((c) => abs(c[axis]))));
  return coords.map(([x, y]) => [round(x / scale[0]), round(y / scale[1])]);
}

const STOPWORDS = new Set(
  'a about above after again against all am an and any are as at be because been before being below between both but by can could did do does doing down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these they this those through to too under until up very was we were what when where which while who whom why will with would you your yours yourself yourselves'.split(
    ' ',
  ),
);

/** Lower-case words of two or more letters or digits, without common English stopwords. */
export function terms(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? []).filter((w) => !STOPWORDS.has(w));
}

/** Class-based TF-IDF (as BERTopic names topics): a term weighs tf_in_cluster x log(1 + A / tf_overall), A the mean words per cluster. */
export function clusterTerms(
  texts: string[],
  assignments: number[],
  k: number,
  top = 10,
): Array<Array<{ term: string; weight: number }>> {
  const perCluster = Array.from({ length: k }, () => new Map<string, number>());
  const overall = new Map<string, number>();
  const words = new Array<number>(k).fill(0);
  texts.forEach((text, i) => {
    for (const term of terms(text)) {
      const c = assignments[i];
      perCluster[c].set(term, (perCluster[c].get(term) ?? 0) + 1);
      overall.set(term, (overall.get(term) ?? 0) + 1);
      words[c]++;
    }
  });
  const average = words.reduce((s, w) => s + w, 0) / k;
  return perCluster.map((counts, c) =>
    [...counts.entries()]
      .map(([term, tf]) => ({ term, weight: round((tf / max(1, words[c])) * log(1 + average / overall.get(term)!)) }))
      .sort((a, b) => b.weight - a.weight || a.term.localeCompare(b.term))
      .slice(0, top),
  );
}

const REDUCE_ABOVE_ROWS = 2000;
const REDUCED_DIMENSIONS = 128;

export interface ClusterResult {
  k: number;
  silhouette: number | null;
  method: 'kmeans';
  projection: 'pca';
  candidates: Array<{ k: number; silhouette: number | null }>;
  clusters: Array<{
    id: number;
    size: number;
    name: string;
    terms: Array<{ term: string; weight: number }>;
    exemplar_row_ids: string[];
  }>;
  points: Array<{ row_id: string; cluster: number; x: number; y: number }>;
}

/**
 * Texts and their embeddings to named clusters and a 2-D map: random projection to 64
 * dimensions, k-means++ with k by silhouette (or given), clusters by size (largest is 0), named by
 * their three most distinctive terms, exemplars nearest each centroid. The same seed gives the same result.
 */
export async function clusterTexts(
  items: Array<{ row_id: string; text: string }>,
  vectors: ArrayLike<number>[],
  opts: { seed: number; k?: number; kMax?: number; exemplars?: number },
): Promise<ClusterResult> {
  if (!items.length)
    return { k: 0, silhouette: null, method: 'kmeans', projection: 'pca', candidates: [], clusters: [], points: [] };
  // Wide vectors of many rows are projected down first; small sets keep every dimension.
  const points =
    vectors.length > REDUCE_ABOVE_ROWS
      ? reduce(vectors, REDUCED_DIMENSIONS, opts.seed)
      : vectors.map((v) => unit(Array.from(v)));
  const found = clusterPoints(points, opts, (await import('ml-kmeans')).kmeans);
  const sizes = new Array<number>(found.k).fill(0);
  for (const a of found.assignments) sizes[a]++;
  const order = sizes
    .map((size, c) => ({ size, c, first: found.assignments.indexOf(c) }))
    .sort((a, b) => b.size - a.size || a.first - b.first);
  const renumber = new Map(order.map((o, i) => [o.c, i]));
  const assignments = found.assignments.map((a) => renumber.get(a)!);
  const centroids = order.map((o) => unit(found.centroids[o.c] ?? points[0]));
  const named = clusterTerms(
    items.map((i) => i.text),
    assignments,
    found.k,
  );
  const coords = project2d(points, opts.seed);
  return {
    k: found.k,
    silhouette: found.silhouette,
    method: 'kmeans',
    projection: 'pca',
    candidates: found.candidates,
    clusters: order.map((o, id) => ({
      id,
      size: o.size,
      name: named[id]
        .slice(0, 3)
        .map((t) => t.term)
        .join(' · '),
      terms: named[id],
      exemplar_row_ids: assignments
        .map((a, i) => ({ a, i, sim: a === id ? dot(points[i], centroids[id]) : -Infinity }))
        .filter((x) => x.a === id)
        .sort((x, y) => y.sim - x.sim || x.i - y.i)
        .slice(0, opts.exemplars ?? 3)
        .map((x) => items[x.i].row_id),
    })),
    points: items.map((item, i) => ({
      row_id: item.row_id,
      cluster: assignments[i],
      x: coords[i][0],
      y: coords[i][1],
    })),
  };
}
