/**
 * A JSON value written exactly as PostgreSQL prints it once stored as jsonb (`data::text`):
 * members ordered by the length of their name in UTF-8 bytes, then bytewise; `", "` and `": "`
 * between items; strings escaped as JSON.stringify does (PostgreSQL's escape_json escapes the
 * same characters, control characters as lowercase `\u00xx`); numbers in plain decimal notation
 * (numeric's output: `1e+21` prints as `1000000000000000000000`, `1.5e-7` as `0.00000015`).
 *
 * An upload sends this text, so the version's content hash (SHA-256 over `row_id data::text`
 * lines in row order, RowsRepository.contentHash) is computed while the rows stream instead of
 * by reading them all back. test/e2e/datasets/content-hash holds it to the database's own text.
 */
export function jsonbOutput(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return numberText(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function')
        return jsonbOutput((value as { toJSON(): unknown }).toJSON());
      if (Array.isArray(value)) return arrayText(value);
      return objectText(value as Record<string, unknown>);
    default:
      // undefined, functions and symbols: JSON.stringify's `null` in arrays (objects skip them).
      return 'null';
  }
}

function arrayText(values: unknown[]): string {
  if (!values.length) return '[]';
  let out = '[';
  for (let i = 0; i < values.length; i++) out += (i ? ', ' : '') + jsonbOutput(values[i]);
  return `${out}]`;
}

/** A member order worked out: the names as the object lists them, in jsonb's order, quoted. */
interface MemberOrder {
  keys: string[];
  order: string[];
  quoted: string[];
}
/** Orders worked out, by the object's names (rows of one file share a few shapes, nested ones included). */
const orders = new Map<string, MemberOrder>();
const MAX_ORDERS = 256;

/** The shapes met last (a row and the objects inside it): compared name by name before any lookup. */
const recent: MemberOrder[] = [];
const RECENT = 4;

function memberOrder(keys: string[]): MemberOrder {
  for (const shape of recent) if (sameNames(shape.keys, keys)) return shape;
  const signature = keys.join('\u0000');
  let known = orders.get(signature);
  // The signature can be shared by names holding NUL: the names themselves decide.
  if (!known || !sameNames(known.keys, keys)) {
    const order = [...keys].sort(jsonbKeyOrder);
    known = { keys, order, quoted: order.map((k) => `${JSON.stringify(k)}: `) };
    if (orders.size >= MAX_ORDERS) orders.clear();
    orders.set(signature, known);
  }
  recent.unshift(known);
  if (recent.length > RECENT) recent.pop();
  return known;
}

function sameNames(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function objectText(object: Record<string, unknown>): string {
  const { order, quoted } = memberOrder(Object.keys(object));
  let out = '{';
  let first = true;
  for (let i = 0; i < order.length; i++) {
    const v = object[order[i]];
    // JSON.stringify leaves out members it cannot write.
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    out += (first ? '' : ', ') + quoted[i] + jsonbOutput(v);
    first = false;
  }
  return `${out}}`;
}

const ASCII = /^[\x00-\x7f]*$/;

/** jsonb's member order: shorter names (in UTF-8 bytes) first, then bytewise. */
export function jsonbKeyOrder(a: string, b: string): number {
  if (ASCII.test(a) && ASCII.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length - y.length || Buffer.compare(x, y);
}

/** A number as numeric prints it: JSON.stringify's digits, an exponent moved into the digits. */
function numberText(n: number): string {
  if (!Number.isFinite(n)) return 'null';
  const text = JSON.stringify(n);
  const e = text.indexOf('e');
  if (e < 0) return text;
  const negative = text.startsWith('-');
  const mantissa = text.slice(negative ? 1 : 0, e);
  const exponent = Number(text.slice(e + 1));
  const point = mantissa.indexOf('.');
  const digits = point < 0 ? mantissa : mantissa.slice(0, point) + mantissa.slice(point + 1);
  // Where the decimal point falls in `digits` once the exponent is applied.
  const at = (point < 0 ? mantissa.length : point) + exponent;
  let plain: string;
  if (at <= 0) plain = `0.${'0'.repeat(-at)}${digits}`;
  else if (at >= digits.length) plain = digits + '0'.repeat(at - digits.length);
  else plain = `${digits.slice(0, at)}.${digits.slice(at)}`;
  return negative ? `-${plain}` : plain;
}

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
