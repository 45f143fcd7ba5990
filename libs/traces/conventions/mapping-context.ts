/** What every convention mapper works with: value helpers, the mapping context (`Ctx`) and attribute rows. */
import type { AttributeValue, RetrievedDocument, SourceSpan, SpanKind, ToolCall } from '../span.types.js';

// ---------------------------------------------------------------------------------------------
// Small value helpers
// ---------------------------------------------------------------------------------------------

export const isPresent = (v: AttributeValue | undefined): v is AttributeValue =>
  v !== undefined && v !== null && v !== '';

export function toNumber(v: AttributeValue | undefined): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

export function toStr(v: AttributeValue | undefined): string | null {
  if (typeof v === 'string') return v === '' ? null : v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
}

/** Parses strings that look like JSON; anything else (or unparsable) is returned as is. */
export function parseJsonish(v: AttributeValue): AttributeValue {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (!(t.startsWith('{') || t.startsWith('[') || t.startsWith('"'))) return v;
  try {
    return JSON.parse(t) as AttributeValue;
  } catch {
    return v;
  }
}

export function isObject(v: AttributeValue | undefined): v is { [key: string]: AttributeValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function jsonBytes(v: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');
  } catch {
    // Cycles or BigInt cannot come from a JSON/OTLP reader; treat as unmeasurable and oversize.
    return Number.POSITIVE_INFINITY;
  }
}

/** The longest text JSON.stringify gives a number (`-2.2250738585072014e-308`). */
const NUMBER_BYTES = 24;

/**
 * An upper bound of jsonBytes(v) found without writing the JSON: a string's UTF-16 unit takes at
 * most 6 bytes (`\uXXXX`). Infinity for what it cannot bound (toJSON, BigInt, deep nesting), so
 * the caller measures exactly; limits are checked with it first and measured only when near.
 */
export function jsonBytesBound(v: unknown, depth = 0): number {
  switch (typeof v) {
    case 'string':
      return v.length * 6 + 2;
    case 'number':
      return NUMBER_BYTES;
    case 'boolean':
      return 5;
    case 'undefined':
    case 'function':
    case 'symbol':
      // Left out of objects, `null` in arrays.
      return 4;
    case 'object': {
      if (v === null) return 4;
      if (depth > 64 || typeof (v as { toJSON?: unknown }).toJSON === 'function') return Number.POSITIVE_INFINITY;
      let n = 2;
      if (Array.isArray(v)) {
        for (const x of v) n += jsonBytesBound(x, depth + 1) + 1;
        return n;
      }
      for (const k in v) n += k.length * 6 + 3 + jsonBytesBound((v as Record<string, unknown>)[k], depth + 1) + 1;
      return n;
    }
    default:
      return Number.POSITIVE_INFINITY;
  }
}

/** Whether the JSON of `v` takes at most `limit` bytes (written only when the bound says it might not). */
export function jsonFits(v: unknown, limit: number): boolean {
  return jsonBytesBound(v) <= limit || jsonBytes(v) <= limit;
}

/** Folds numeric path segments so indexed attribute families group together. */
export function foldKey(key: string): string {
  return key.replace(/(^|\.)\d+(?=\.|$)/g, '$1*');
}

export const round3 = (n: number): number => Math.round(n * 1000) / 1000;
// ---------------------------------------------------------------------------------------------
// Mapping context
// ---------------------------------------------------------------------------------------------

export type Mapped = {
  kind: SpanKind | null;
  name: string | null;
  input: AttributeValue | undefined;
  output: AttributeValue | undefined;
  model: string | null;
  tokens_input: number | null;
  tokens_output: number | null;
  tokens_total: number | null;
  cost: number | null;
  error: string | null;
  session_id: string | null;
  user_id: string | null;
  tool_calls: ToolCall[];
  retrieved_documents: RetrievedDocument[];
};

export class Ctx {
  readonly out: Mapped = {
    kind: null,
    name: null,
    input: undefined,
    output: undefined,
    model: null,
    tokens_input: null,
    tokens_output: null,
    tokens_total: null,
    cost: null,
    error: null,
    session_id: null,
    user_id: null,
    tool_calls: [],
    retrieved_documents: [],
  };
  readonly used = new Map<string, Set<string>>();
  readonly consumedEvents = new Set<number>();

  constructor(readonly span: SourceSpan) {}

  get attrs(): Record<string, AttributeValue> {
    return this.span.attributes;
  }

  has(key: string): boolean {
    return isPresent(this.attrs[key]);
  }

  /** Records that `field` took `keys`. */
  mark(field: string, ...keys: string[]): void {
    let set = this.used.get(field);
    if (!set) this.used.set(field, (set = new Set()));
    for (const k of keys) set.add(k);
  }

  empty(field: keyof Mapped): boolean {
    const v = this.out[field];
    return v === null || v === undefined || (Array.isArray(v) && v.length === 0);
  }

  /** First present key of `keys`, unmarked (caller marks what it actually uses). */
  first(keys: string[]): { key: string; value: AttributeValue } | null {
    for (const key of keys) if (this.has(key)) return { key, value: this.attrs[key] };
    return null;
  }

  /**
   * Kind from a marker attribute through `table`. A value the table does not know is left unmapped
   * (so kept verbatim) and the kind open for fallbacks, rather than consumed into 'unknown'.
   */
  setKind(key: string, table: Record<string, SpanKind>, caseOf: (s: string) => string): boolean {
    if (!this.empty('kind')) return false;
    const raw = toStr(this.attrs[key]);
    const kind = raw === null ? undefined : table[caseOf(raw)];
    if (kind === undefined) return false;
    this.out.kind = kind;
    this.mark('kind', key);
    return true;
  }

  setString(field: 'name' | 'model' | 'session_id' | 'user_id' | 'error', keys: string[]): void {
    if (!this.empty(field)) return;
    for (const key of keys) {
      const s = toStr(this.attrs[key]);
      if (s !== null) {
        this.out[field] = s;
        this.mark(field, key);
        return;
      }
    }
  }

  /**
   * The component's own name where the convention gives it apart from the span name (GenAI names
   * its spans `invoke_agent support-agent`, `execute_tool lookup_order`): an agent span's agent, a
   * tool span's tool. Topology, enrichment and search then name components alike in every
   * convention; the span name stays the fallback.
   */
  setComponentName(agentKeys: string[], toolKeys: string[]): void {
    if (this.out.kind === 'agent') this.setString('name', agentKeys);
    else if (this.out.kind === 'tool') this.setString('name', toolKeys);
  }

  setNumber(field: 'tokens_input' | 'tokens_output' | 'tokens_total' | 'cost', keys: string[]): void {
    if (!this.empty(field)) return;
    for (const key of keys) {
      const n = toNumber(this.attrs[key]);
      if (n !== null) {
        this.out[field] = n;
        this.mark(field, key);
        return;
      }
    }
  }

  setValue(field: 'input' | 'output', key: string, parse: boolean, extraKeys: string[] = []): void {
    if (!this.empty(field) || !this.has(key)) return;
    const v = this.attrs[key];
    this.out[field] = parse ? parseJsonish(v) : v;
    this.mark(field, key, ...extraKeys);
  }

  /**
   * Indexed families: `prefix.N.rest` flattened keys, or one `prefix` attribute holding an array of
   * objects (a reader that kept the list). Returns rows by index with `rest -> {key, value}`.
   */
  indexed(prefix: string): Map<number, Map<string, { key: string; value: AttributeValue }>> {
    const rows = new Map<number, Map<string, { key: string; value: AttributeValue }>>();
    const put = (i: number, rest: string, key: string, value: AttributeValue): void => {
      let row = rows.get(i);
      if (!row) rows.set(i, (row = new Map()));
      row.set(rest, { key, value });
    };
    const p = `${prefix}.`;
    for (const [key, value] of Object.entries(this.attrs)) {
      if (!key.startsWith(p) || !isPresent(value)) continue;
      const m = /^(\d+)\.(.+)$/.exec(key.slice(p.length));
      if (m) put(Number(m[1]), m[2], key, value);
    }
    const whole = this.attrs[prefix];
    if (rows.size === 0 && Array.isArray(whole)) {
      whole.forEach((item, i) => {
        if (isObject(item)) for (const [rest, value] of flattenObject(item)) put(i, rest, prefix, value);
      });
    }
    return new Map([...rows.entries()].sort((a, b) => a[0] - b[0]));
  }
}

export function flattenObject(obj: { [key: string]: AttributeValue }, prefix = ''): Array<[string, AttributeValue]> {
  const out: Array<[string, AttributeValue]> = [];
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (isObject(v)) out.push(...flattenObject(v, key));
    else if (Array.isArray(v) && v.every(isObject))
      v.forEach((item, i) => out.push(...flattenObject(item as { [key: string]: AttributeValue }, `${key}.${i}`)));
    else if (isPresent(v)) out.push([key, v]);
  }
  return out;
}

export type Row = Map<string, { key: string; value: AttributeValue }>;

/** Sub-rows of a row: `sub.M.rest` entries grouped by M. */
export function subRows(row: Row, sub: string): Map<number, Row> {
  const out = new Map<number, Row>();
  const p = `${sub}.`;
  for (const [rest, cell] of row) {
    if (!rest.startsWith(p)) continue;
    const m = /^(\d+)\.(.+)$/.exec(rest.slice(p.length));
    if (!m) continue;
    let r = out.get(Number(m[1]));
    if (!r) out.set(Number(m[1]), (r = new Map()));
    r.set(m[2], cell);
  }
  return new Map([...out.entries()].sort((a, b) => a[0] - b[0]));
}
