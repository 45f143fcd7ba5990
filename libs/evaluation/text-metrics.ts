/**
 * Text-overlap metrics with their standard definitions: SQuAD token F1, sentence BLEU-4
 * (Papineni et al. 2002, with Chen & Cherry's smoothing method 1), ROUGE-L (Lin 2004, F1).
 */

const ARTICLES = new Set(['a', 'an', 'the']);

/** SQuAD's normalisation: lower case, no punctuation, no articles, single spaces. */
export function squadTokens(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, ' ')
    .split(/\s+/)
    .filter((t) => t && !ARTICLES.has(t));
}

/** Whitespace tokens after lower-casing and splitting punctuation off words. */
export function plainTokens(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/([\p{P}\p{S}])/gu, ' $1 ')
    .split(/\s+/)
    .filter(Boolean);
}

function counts(tokens: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of tokens) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
}

/** Token-overlap F1 (SQuAD): 1 when both are empty, 0 when only one is. */
export function tokenF1(prediction: string, reference: string): { f1: number; precision: number; recall: number } {
  const p = squadTokens(prediction);
  const r = squadTokens(reference);
  if (!p.length || !r.length) {
    const same = p.length === r.length ? 1 : 0;
    return { f1: same, precision: same, recall: same };
  }
  const rc = counts(r);
  let common = 0;
  for (const [t, n] of counts(p)) common += Math.min(n, rc.get(t) ?? 0);
  if (!common) return { f1: 0, precision: 0, recall: 0 };
  const precision = common / p.length;
  const recall = common / r.length;
  return { f1: (2 * precision * recall) / (precision + recall), precision, recall };
}

function ngrams(tokens: string[], n: number): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i + n <= tokens.length; i++) {
    const g = tokens.slice(i, i + n).join('\u0001');
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/** Modified (clipped) n-gram precision of a candidate against one reference, as numerator and denominator. */
export function modifiedPrecision(
  candidate: string[],
  reference: string[],
  n: number,
): { matches: number; total: number } {
  const cand = ngrams(candidate, n);
  const ref = ngrams(reference, n);
  let matches = 0;
  let total = 0;
  for (const [g, c] of cand) {
    matches += Math.min(c, ref.get(g) ?? 0);
    total += c;
  }
  return { matches, total };
}

/**
 * Sentence BLEU with up to 4-grams, uniform weights, the brevity penalty, and smoothing method 1
 * (a zero match count becomes epsilon = 0.1) so one missing 4-gram does not zero the score.
 */
export function bleu(
  candidateText: string,
  referenceText: string,
  maxN = 4,
): { bleu: number; precisions: number[]; brevity_penalty: number } {
  const candidate = plainTokens(candidateText);
  const reference = plainTokens(referenceText);
  if (!candidate.length) return { bleu: 0, precisions: Array(maxN).fill(0), brevity_penalty: 0 };
  const precisions: number[] = [];
  let logSum = 0;
  for (let n = 1; n <= maxN; n++) {
    const { matches, total } = modifiedPrecision(candidate, reference, n);
    const p = total === 0 ? 0 : (matches === 0 ? 0.1 : matches) / total;
    precisions.push(total === 0 ? 0 : matches / total);
    logSum += p > 0 ? Math.log(p) / maxN : -Infinity;
  }
  const c = candidate.length;
  const r = reference.length;
  const bp = c > r ? 1 : Math.exp(1 - r / c);
  return { bleu: Number.isFinite(logSum) ? bp * Math.exp(logSum) : 0, precisions, brevity_penalty: bp };
}

/** Length of the longest common subsequence of two token lists (two rows of the DP table). */
export function lcsLength(a: string[], b: string[]): number {
  let prev = new Array<number>(b.length + 1).fill(0);
  let cur = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++)
      cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
    [prev, cur] = [cur, prev];
  }
  return prev[b.length];
}

/** ROUGE-L: precision and recall of the LCS of the token lists, and their F1. */
export function rougeL(
  candidateText: string,
  referenceText: string,
): { f1: number; precision: number; recall: number } {
  const c = plainTokens(candidateText);
  const r = plainTokens(referenceText);
  if (!c.length || !r.length) return { f1: 0, precision: 0, recall: 0 };
  const lcs = lcsLength(c, r);
  if (!lcs) return { f1: 0, precision: 0, recall: 0 };
  const precision = lcs / c.length;
  const recall = lcs / r.length;
  return { f1: (2 * precision * recall) / (precision + recall), precision, recall };
}
