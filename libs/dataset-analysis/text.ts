import { eng, fra, deu, spa, ita, por, nld, removeStopwords } from 'stopword';
import { syllable } from 'syllable';
import { lazyRequire } from '#libs/common/lazy-require.js';
import { countTokens } from '#libs/common/token-count.js';
import { histogram, round, summary, type Histogram, type Summary } from './stats.js';

// tinyld's language profiles load with the first text analysed, not at every start.
const tinyld = lazyRequire<typeof import('tinyld')>('tinyld');
const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;
const STOPWORDS: Record<string, string[]> = { en: eng, fr: fra, de: deu, es: spa, it: ita, pt: por, nl: nld };

export interface TextProperties {
  chars: number;
  words: number;
  tokens: number;
  language: string | null;
  flesch_reading_ease: number | null;
  empty: boolean;
  near_empty: boolean;
}

/** Text as analysed: strings as they are, other values as JSON, missing as ''. */
export function asText(value: unknown): string {
  return value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
}

/** Flesch reading ease of English text: 206.835 - 1.015 words/sentence - 84.6 syllables/word. */
export function fleschReadingEase(text: string): number | null {
  const words = text.match(WORD) ?? [];
  if (!words.length) return null;
  const sentences = Math.max(1, (text.match(/[.!?]+/g) ?? []).length);
  const syllables = words.reduce((s, w) => s + Math.max(1, syllable(w)), 0);
  return round(206.835 - 1.015 * (words.length / sentences) - 84.6 * (syllables / words.length), 2);
}

export function textProperties(value: unknown): TextProperties {
  const text = asText(value);
  const trimmed = text.trim();
  const words = (trimmed.match(WORD) ?? []).length;
  const language = trimmed.length >= 12 ? tinyld().detect(trimmed) || null : null;
  return {
    chars: text.length,
    words,
    tokens: trimmed ? countTokens(text) : 0,
    language,
    flesch_reading_ease: language === 'en' ? fleschReadingEase(trimmed) : null,
    empty: trimmed.length === 0,
    near_empty: trimmed.length > 0 && words < 3,
  };
}

export interface TextColumnAnalysis {
  column: string;
  rows: number;
  empty_rate: number;
  near_empty_rate: number;
  chars: { summary: Summary; histogram: Histogram };
  words: { summary: Summary; histogram: Histogram };
  tokens: { summary: Summary; histogram: Histogram };
  flesch_reading_ease: { summary: Summary; histogram: Histogram };
  languages: Array<{ language: string; count: number; share: number }>;
  vocabulary_size: number;
  top_terms: Array<{ term: string; count: number }>;
}

/** One text column: length distributions, languages, vocabulary, top terms (stopwords of its languages removed), readability, empty rates. */
export function analyzeTextColumn(
  column: string,
  values: unknown[],
  props: TextProperties[] = values.map(textProperties),
  topTerms = 20,
): TextColumnAnalysis {
  const n = values.length;
  const dist = (xs: number[]) => ({ summary: summary(xs), histogram: histogram(xs) });
  const languages = new Map<string, number>();
  for (const p of props) if (p.language) languages.set(p.language, (languages.get(p.language) ?? 0) + 1);
  const langList = [...languages.entries()]
    .map(([language, count]) => ({ language, count, share: round(count / n) }))
    .sort((a, b) => b.count - a.count || a.language.localeCompare(b.language));
  const stop = new Set(['en', ...langList.map((l) => l.language)].flatMap((l) => STOPWORDS[l] ?? []));
  const vocabulary = new Map<string, number>();
  for (const v of values)
    for (const word of asText(v).toLowerCase().match(WORD) ?? []) vocabulary.set(word, (vocabulary.get(word) ?? 0) + 1);
  const candidates = removeStopwords([...vocabulary.keys()], [...stop]).filter((w) => w.length > 1 && !/^\d+$/.test(w));
  return {
    column,
    rows: n,
    empty_rate: n ? round(props.filter((p) => p.empty).length / n) : 0,
    near_empty_rate: n ? round(props.filter((p) => p.near_empty).length / n) : 0,
    chars: dist(props.map((p) => p.chars)),
    words: dist(props.map((p) => p.words)),
    tokens: dist(props.map((p) => p.tokens)),
    flesch_reading_ease: dist(props.flatMap((p) => (p.flesch_reading_ease === null ? [] : [p.flesch_reading_ease]))),
    languages: langList,
    vocabulary_size: vocabulary.size,
    top_terms: candidates
      .map((term) => ({ term, count: vocabulary.get(term)! }))
      .sort((a, b) => b.count - a.count || a.term.localeCompare(b.term))
      .slice(0, topTerms),
  };
}

/** Columns whose non-null values are mostly (at least half) strings averaging 3 or more characters. */
export function textColumns(rows: Array<Record<string, unknown>>): string[] {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return columns.filter((c) => {
    const present = rows.map((r) => r[c]).filter((v) => v !== undefined && v !== null);
    const strings = present.filter((v): v is string => typeof v === 'string');
    return (
      strings.length > 0 &&
      strings.length >= present.length / 2 &&
      strings.reduce((s, v) => s + v.length, 0) / strings.length >= 3
    );
  });
}
