/** Small text utilities shared by the quality checks. */

// Bound once: a global lookup per call is slow where globals are intercepted (jest's sandbox) and this runs in hot loops.
const { imul } = Math;

/** Trimmed, whitespace-collapsed, case-folded: what "the same text" means to the checks. */
export function normalizeText(text: string): string {
  return text.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
}

/** Words: runs of letters and digits (Unicode-aware), lower-cased. */
export function words(text: string): string[] {
  return normalizeText(text).match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** FNV-1a, 32-bit, over UTF-16 code units. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** murmur3's 32-bit finaliser: a fast, well-mixed permutation of 32-bit integers. */
export function mix32(x: number): number {
  x ^= x >>> 16;
  x = imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** Hashes of the k-word shingles of a text (of its words when it has fewer than k), sorted and unique. */
export function shingles(text: string, k: number): Uint32Array {
  const w = words(text);
  const set = new Set<number>();
  if (w.length < k) w.forEach((word) => set.add(fnv1a(word)));
  else for (let i = 0; i + k <= w.length; i++) set.add(fnv1a(w.slice(i, i + k).join(' ')));
  return Uint32Array.from(set).sort();
}

/** Jaccard similarity of two sorted unique hash sets. */
export function jaccard(a: Uint32Array, b: Uint32Array): number {
  if (!a.length && !b.length) return 1;
  let i = 0;
  let j = 0;
  let common = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      common++;
      i++;
      j++;
    } else if (a[i] < b[j]) i++;
    else j++;
  }
  return common / (a.length + b.length - common);
}

/** A value as text for the checks: strings as they are, other scalars stringified, objects as JSON; null/absent as undefined. */
export function asText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** Shows the shape of a sensitive value without its content: first and last characters, the rest masked. */
export function mask(value: string): string {
  if (value.length <= 4) return '*'.repeat(value.length);
  return `${value.slice(0, 2)}${'*'.repeat(Math.min(value.length - 4, 12))}${value.slice(-2)}`;
}
