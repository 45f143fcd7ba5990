import { jsonbOutput } from '../datasets/ingest/jsonb-text.js';

/** Unpaired UTF-16 surrogates (with the u flag a pair is one code point, so only a lone half matches) and NUL. */
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/gu;
const clean = (text: string): string => text.replace(UNSTORABLE, '\uFFFD');

/**
 * JSON for a jsonb column: PostgreSQL's jsonb refuses the NUL character and unpaired surrogates
 * (escaped by JSON.stringify as \u0000 and \udXXX), so they become U+FFFD, in values and member
 * names, rather than failing the landing.
 */
export function jsonbText(value: unknown): string {
  const text = JSON.stringify(value);
  if (!text.includes('\\u0000') && !text.includes('\\ud')) return text;
  return JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'string') return clean(v);
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).some((k) => clean(k) !== k)) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [clean(k), x]));
    }
    return v;
  });
}

/**
 * The text PostgreSQL prints for the jsonb of `value` (`data::text`), once made storable as
 * jsonbText makes it: what a landing sends, so it can hash the version's rows while they stream.
 */
export function jsonbStoredText(value: unknown): string {
  const text = jsonbOutput(value);
  if (!text.includes('\\u0000') && !text.includes('\\ud')) return text;
  return jsonbOutput(JSON.parse(jsonbText(value)));
}
