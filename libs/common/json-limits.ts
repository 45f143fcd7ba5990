/**
 * Limits every JSON text the service reads (request bodies, JSON Lines bodies, uploaded rows,
 * trace records) is held to before anything walks it recursively: class-transformer,
 * class-validator, JSON.stringify, the row rules and PostgreSQL's jsonb parser all recurse, so
 * a body of 100,000 `[` would overflow a stack long after JSON.parse (which does not recurse)
 * accepted it. Documented in docs/security.md and docs/api-conventions.md (Limits).
 */

/** Nesting of `[` and `{` a request body may have: 64 levels. */
export const MAX_BODY_DEPTH = 64;
/** Nesting a stored JSON value (a dataset row, a trace record) may have: 32 levels, so a row fits in any body that carries it. */
export const MAX_VALUE_DEPTH = 32;

export interface JsonScan {
  /** The deepest nesting seen, up to the first level past the limit (the scan stops there). */
  depth: number;
  tooDeep: boolean;
  /** A `\uD800`-`\uDFFF` escape without its pair: a string PostgreSQL cannot store and UTF-8 cannot encode. */
  loneSurrogate: boolean;
}

/** The bytes (and UTF-16 units) of JSON's structure, for scanners of raw JSON. */
export const JSON_CHAR = {
  QUOTE: 0x22,
  BACKSLASH: 0x5c,
  COMMA: 0x2c,
  COLON: 0x3a,
  OPEN_ARRAY: 0x5b,
  OPEN_OBJECT: 0x7b,
  CLOSE_ARRAY: 0x5d,
  CLOSE_OBJECT: 0x7d,
} as const;
const { QUOTE, BACKSLASH, OPEN_ARRAY, OPEN_OBJECT, CLOSE_ARRAY, CLOSE_OBJECT } = JSON_CHAR;
const LOWER_U = 0x75;

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

/**
 * One pass over raw JSON (bytes or text) counting the nesting of `[` and `{` outside strings,
 * stopping at the first level beyond `maxDepth`, and noting `\u` escapes that leave a UTF-16
 * surrogate unpaired. Malformed JSON is left for the parser to refuse; this only has to be
 * right for text the parser would accept.
 */
export function scanJson(text: Buffer | string, maxDepth: number): JsonScan {
  const length = text.length;
  const at: (i: number) => number = typeof text === 'string' ? (i) => text.charCodeAt(i) : (i) => text[i];
  let depth = 0;
  let deepest = 0;
  let inString = false;
  let loneSurrogate = false;
  // Set right after a high-surrogate escape: the next thing in the string must be a low one.
  let pendingHigh = false;
  for (let i = 0; i < length; i++) {
    const c = at(i);
    if (inString) {
      if (c === BACKSLASH) {
        const next = at(i + 1);
        if (next === LOWER_U) {
          let unit = 0;
          for (let k = 2; k < 6; k++) unit = (unit << 4) | hexValue(at(i + k));
          if (unit >= 0xd800 && unit <= 0xdbff) {
            if (pendingHigh) loneSurrogate = true;
            pendingHigh = true;
          } else if (unit >= 0xdc00 && unit <= 0xdfff) {
            if (!pendingHigh) loneSurrogate = true;
            pendingHigh = false;
          } else {
            if (pendingHigh) loneSurrogate = true;
            pendingHigh = false;
          }
          i += 5;
        } else {
          if (pendingHigh) loneSurrogate = true;
          pendingHigh = false;
          i += 1;
        }
        continue;
      }
      if (pendingHigh) {
        loneSurrogate = true;
        pendingHigh = false;
      }
      if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > maxDepth) return { depth: deepest, tooDeep: true, loneSurrogate };
      }
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return { depth: deepest, tooDeep: false, loneSurrogate };
}

/** The nesting depth of a parsed value, counted without recursion and given up past `maxDepth`. */
export function valueDepth(value: unknown, maxDepth: number): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > deepest) {
      deepest = depth;
      if (deepest > maxDepth) return deepest;
    }
    for (const child of Array.isArray(node) ? node : Object.values(node))
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return deepest;
}

// With the u flag a surrogate pair is one code point, so only an unpaired half matches.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const LONE_SURROGATES = /[\uD800-\uDFFF]/gu;

/** Whether a string holds an unpaired UTF-16 surrogate. */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/**
 * The dotted path (`rows.0.question`, as `errors[].field` spells nested fields) of the first
 * string, or member name, holding an unpaired UTF-16 surrogate; undefined when there is none.
 * Iterative, so it is safe on any value; callers hold depth to a limit first anyway.
 */
export function loneSurrogatePath(value: unknown): string | undefined {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'string') {
      if (hasLoneSurrogate(node)) return path || '(the body)';
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    const entries: Array<[string, unknown]> = Array.isArray(node)
      ? node.map((v, i) => [String(i), v])
      : Object.entries(node);
    // Reversed onto the stack, so the first offending member in document order is found first.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i];
      // The path is shown to people: an unpaired half in a member name is shown as U+FFFD.
      const childPath = `${path ? `${path}.` : ''}${key.replace(LONE_SURROGATES, '\uFFFD')}`;
      if (hasLoneSurrogate(key)) return childPath;
      stack.push([child, childPath]);
    }
  }
  return undefined;
}

/**
 * The largest integer a request may carry where the record keeps a 32-bit integer (version
 * numbers, counts): beyond it PostgreSQL answers "out of range", and beyond 2^53 JSON numbers
 * are not even exact in JavaScript. DTOs bound every integer with `@Max`; offsets and limits
 * have smaller documented bounds of their own.
 */
export const MAX_INT32 = 2_147_483_647;

/** Member names class-transformer drops without a word (it guards against prototype pollution), so they are refused instead. */
export const RESERVED_MEMBER_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor']);

/** The dotted path of the first member named `__proto__` or `constructor`, or undefined. Iterative. */
export function reservedMemberPath(value: unknown): string | undefined {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length) {
    const [node, path] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    const entries: Array<[string, unknown]> = Array.isArray(node)
      ? node.map((v, i) => [String(i), v])
      : Object.entries(node);
    if (!Array.isArray(node)) {
      const reserved = entries.find(([key]) => RESERVED_MEMBER_NAMES.has(key));
      if (reserved) return path ? `${path}.${reserved[0]}` : reserved[0];
    }
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i];
      if (child !== null && typeof child === 'object') stack.push([child, path ? `${path}.${key}` : key]);
    }
  }
  return undefined;
}
