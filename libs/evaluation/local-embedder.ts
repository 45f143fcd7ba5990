/**
 * The built-in local embedder: deterministic, no network, no model download. A text becomes
 * the hashed counts of its character 3- to 5-grams (within word boundaries), sign-hashed into
 * `dimensions` buckets, with sublinear term frequency (1 + ln tf) and L2 normalisation. Texts
 * that share spelling share direction; it captures surface similarity, not meaning.
 */
export const LOCAL_EMBEDDER = { name: 'local-char-ngram', defaultDimensions: 512 } as const;

// Bound once: hot loops run in sandboxes where global lookups are slow (jest).
const { imul, sqrt, log } = Math;

function fnv1a(text: string, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) {
    h ^= text.charCodeAt(i);
    h = imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function localEmbed(text: string, dimensions: number = LOCAL_EMBEDDER.defaultDimensions): Float32Array {
  const vector = new Float32Array(dimensions);
  const normalized = ` ${text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()} `;
  const counts = new Map<number, number>();
  for (let n = 3; n <= 5; n++) {
    for (let i = 0; i + n <= normalized.length; i++) {
      const h = fnv1a(normalized, i, i + n);
      counts.set(h, (counts.get(h) ?? 0) + 1);
    }
  }
  for (const [h, tf] of counts) {
    const bucket = h % dimensions;
    // The top bit chooses the sign, so collisions cancel out on average instead of piling up.
    vector[bucket] += (h & 0x80000000 ? -1 : 1) * (1 + log(tf));
  }
  let norm = 0;
  for (let i = 0; i < dimensions; i++) norm += vector[i] * vector[i];
  norm = sqrt(norm);
  if (norm > 0) for (let i = 0; i < dimensions; i++) vector[i] /= norm;
  return vector;
}

/** Cosine similarity of two vectors of the same length (0 when either is all zeros). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`vectors differ in length (${a.length} and ${b.length})`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / sqrt(na * nb) : 0;
}
