import { isUuid } from '../../../../libs/common/uuid.js';
import { containsPattern, escapeLike } from '../../../../libs/database/like.js';

/**
 * The JSON query language over dataset rows, compiled to a parameterised PostgreSQL boolean
 * expression. Every value and every JSON path key is a bind parameter; only operator keywords
 * and the caller's trusted expressions reach the SQL text. See docs/query-language.md.
 *
 *   Filter := {"and": [Filter…]} | {"or": [Filter…]} | {"not": Filter}
 *           | {"field": Field, "op": Op, "value"?: JSON, "case_insensitive"?: bool}
 *           | {"dimension": name, "op": Op, "value"?: JSON}
 *   Field  := "column" | "column.key.key" | ["column", "key", …] | "_row_id"
 */
export interface FilterContext {
  /** SQL expression of the row's jsonb object, e.g. `r.data` (trusted). */
  rowExpr: string;
  /** SQL expression of the row id (uuid), e.g. `r.row_id`. */
  rowIdExpr: string;
  /** SQL of a row's value (text) of the dimension whose name is bound at `placeholder`. */
  dimensionExpr: (placeholder: string) => string;
  /** Top-level columns of the version; a field's first segment must be one of them. */
  columns: ReadonlySet<string>;
  /** Bind parameters so far; the compiler appends and numbers its placeholders after them. */
  params: unknown[];
}

/** A filter, sort or projection that breaks the language; `path` is a JSON pointer into it. */
export class FilterError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

export const OPERATORS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'contains', 'starts_with', 'is_null'] as const;
type Op = (typeof OPERATORS)[number];

export const LIMITS = {
  depth: 10,
  predicates: 200,
  string: 10_000,
  in: 1000,
  pathSegments: 10,
  sortKeys: 5,
  select: 200,
} as const;
const ROW_ID = '_row_id';

interface State {
  ctx: FilterContext;
  predicates: number;
}

export function compileFilter(filter: unknown, ctx: FilterContext): string {
  return node(filter, '', 0, { ctx, predicates: 0 });
}

function bind(state: State, value: unknown): string {
  state.ctx.params.push(value);
  return `$${state.ctx.params.length}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function node(filter: unknown, path: string, depth: number, state: State): string {
  const here = path || '/';
  if (!isObject(filter)) throw new FilterError(here, 'a filter must be a JSON object');
  if (depth > LIMITS.depth) throw new FilterError(here, `filters nest at most ${LIMITS.depth} levels deep`);
  const keys = Object.keys(filter);
  for (const combinator of ['and', 'or'] as const) {
    if (combinator in filter) {
      if (keys.length !== 1)
        throw new FilterError(
          here,
          `"${combinator}" stands alone in its object; found also ${keys.filter((k) => k !== combinator).join(', ')}`,
        );
      const parts = filter[combinator];
      if (!Array.isArray(parts) || parts.length === 0)
        throw new FilterError(`${path}/${combinator}`, `"${combinator}" takes a non-empty array of filters`);
      const sql = parts.map((part, i) => node(part, `${path}/${combinator}/${i}`, depth + 1, state));
      return `(${sql.join(combinator === 'and' ? ' AND ' : ' OR ')})`;
    }
  }
  if ('not' in filter) {
    if (keys.length !== 1) throw new FilterError(here, '"not" stands alone in its object');
    // A predicate on an absent field is false, never NULL, so NOT inverts it exactly.
    return `(NOT ${node(filter.not, `${path}/not`, depth + 1, state)})`;
  }
  return predicate(filter, path, state);
}

function predicate(p: Record<string, unknown>, path: string, state: State): string {
  const here = path || '/';
  if (++state.predicates > LIMITS.predicates)
    throw new FilterError(here, `a filter holds at most ${LIMITS.predicates} predicates`);
  const allowed = new Set(['field', 'dimension', 'op', 'value', 'case_insensitive']);
  const unknown = Object.keys(p).filter((k) => !allowed.has(k));
  if (unknown.length)
    throw new FilterError(
      `${path}/${unknown[0]}`,
      `unknown member "${unknown[0]}"; a predicate has field (or dimension), op and value, or is and/or/not`,
    );
  if (!('field' in p) && !('dimension' in p))
    throw new FilterError(here, 'a predicate names a "field" or a "dimension" (or the object is and/or/not)');
  if ('field' in p && 'dimension' in p)
    throw new FilterError(here, 'a predicate names a "field" or a "dimension", not both');
  if (typeof p.op !== 'string' || !(OPERATORS as readonly string[]).includes(p.op)) {
    throw new FilterError(`${path}/op`, `op must be one of ${OPERATORS.join(', ')}`);
  }
  const op = p.op as Op;
  if (
    p.case_insensitive !== undefined &&
    (typeof p.case_insensitive !== 'boolean' || (op !== 'contains' && op !== 'starts_with' && op !== 'eq'))
  ) {
    throw new FilterError(
      `${path}/case_insensitive`,
      'case_insensitive is a boolean, for eq, contains and starts_with',
    );
  }
  const value = checkValue(op, p.value, `${path}/value`, 'value' in p);
  if ('dimension' in p) return dimensionPredicate(p.dimension, op, value, p.case_insensitive === true, path, state);
  const segments = fieldPath(p.field, `${path}/field`, state.ctx);
  if (segments.length === 1 && segments[0] === ROW_ID) return rowIdPredicate(op, value, path, state);
  return jsonPredicate(segments, op, value, p.case_insensitive === true, state);
}

function checkValue(op: Op, value: unknown, path: string, present: boolean): unknown {
  const scalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);
  const checkString = (v: unknown) => {
    if (typeof v === 'string' && v.length > LIMITS.string)
      throw new FilterError(path, `strings in filters are at most ${LIMITS.string} characters`);
  };
  switch (op) {
    case 'is_null':
      if (present && typeof value !== 'boolean') throw new FilterError(path, 'is_null takes true (default) or false');
      return present ? value : true;
    case 'in':
      if (!Array.isArray(value) || value.length === 0 || value.length > LIMITS.in)
        throw new FilterError(path, `in takes a non-empty array of at most ${LIMITS.in} values`);
      value.forEach((v, i) => {
        if (!scalar(v) || v === null) throw new FilterError(`${path}/${i}`, 'in takes strings, numbers or booleans');
        checkString(v);
      });
      return value;
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      if (typeof value !== 'number' && typeof value !== 'string')
        throw new FilterError(path, `${op} takes a number or a string`);
      checkString(value);
      return value;
    case 'starts_with':
      if (typeof value !== 'string') throw new FilterError(path, 'starts_with takes a string');
      checkString(value);
      return value;
    case 'contains':
      if (!scalar(value) || value === null)
        throw new FilterError(
          path,
          'contains takes a string (substring or array element), number or boolean (array element)',
        );
      checkString(value);
      return value;
    default:
      if (!present) throw new FilterError(path, `${op} needs a value`);
      if (JSON.stringify(value).length > LIMITS.string)
        throw new FilterError(path, `values in filters are at most ${LIMITS.string} characters of JSON`);
      return value;
  }
}

function fieldPath(field: unknown, path: string, ctx: FilterContext): string[] {
  const segments =
    typeof field === 'string'
      ? field.split('.')
      : Array.isArray(field) && field.every((s) => typeof s === 'string')
        ? (field as string[])
        : undefined;
  if (!segments || segments.length === 0 || segments.some((s) => s.length === 0 || s.length > 256)) {
    throw new FilterError(
      path,
      'field is a column name, a dotted path ("meta.lang") or an array of path segments (["col.with.dots", "key"])',
    );
  }
  if (segments.length > LIMITS.pathSegments)
    throw new FilterError(path, `a field path has at most ${LIMITS.pathSegments} segments`);
  if (segments[0] === ROW_ID) {
    if (segments.length > 1) throw new FilterError(path, `${ROW_ID} has no sub-fields`);
    return segments;
  }
  if (!ctx.columns.has(segments[0])) {
    // A dotted name may be a column whose own name has dots: the longest matching prefix wins.
    for (let n = segments.length; n > 1; n--) {
      const joined = segments.slice(0, n).join('.');
      if (ctx.columns.has(joined)) return [joined, ...segments.slice(n)];
    }
    const known = [...ctx.columns].slice(0, 20);
    throw new FilterError(
      path,
      `unknown column "${segments[0].slice(0, 100)}"; the version has ${known.map((c) => `"${c}"`).join(', ')}${ctx.columns.size > 20 ? ', …' : ''}`,
    );
  }
  return segments;
}

/** The jsonb at the path (NULL when absent): `data #> $n::text[]`. */
function jsonAt(segments: string[], state: State): string {
  return `(${state.ctx.rowExpr} #> ${bind(state, segments)}::text[])`;
}

function nested(segments: string[], value: unknown): unknown {
  return segments.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}

function jsonPredicate(segments: string[], op: Op, value: unknown, ci: boolean, state: State): string {
  const at = jsonAt(segments, state);
  const text = `(${at} #>> '{}')`;
  const typed = (v: unknown) => (typeof v === 'number' ? 'number' : 'string');
  switch (op) {
    case 'eq':
      if (ci && typeof value === 'string')
        return `(jsonb_typeof(${at}) = 'string' AND lower(${text}) = lower(${bind(state, value)}))`;
      // Containment of a nested scalar is exact equality and can use the GIN index on data.
      if (value !== null && typeof value !== 'object') {
        return `(${state.ctx.rowExpr} @> ${bind(state, JSON.stringify(nested(segments, value)))}::jsonb AND jsonb_typeof(${at}) <> 'array')`;
      }
      return `coalesce(${at} = ${bind(state, JSON.stringify(value))}::jsonb, false)`;
    case 'ne':
      return `(${at} IS DISTINCT FROM ${bind(state, JSON.stringify(value))}::jsonb)`;
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte': {
      const sym = { lt: '<', lte: '<=', gt: '>', gte: '>=' }[op];
      // jsonb compares numbers numerically and strings by code point order within one type; the type guard keeps others out.
      return `coalesce(jsonb_typeof(${at}) = '${typed(value)}' AND ${at} ${sym} ${bind(state, JSON.stringify(value))}::jsonb, false)`;
    }
    case 'in': {
      const values = value as unknown[];
      if (values.every((v) => typeof v !== 'object')) {
        // One containment test per value keeps the GIN index usable.
        return `(jsonb_typeof(${at}) <> 'array' AND (${values.map((v) => `${state.ctx.rowExpr} @> ${bind(state, JSON.stringify(nested(segments, v)))}::jsonb`).join(' OR ')}))`;
      }
      return `coalesce(${at} = ANY(${bind(
        state,
        values.map((v) => JSON.stringify(v)),
      )}::jsonb[]), false)`;
    }
    case 'contains': {
      const element = `coalesce(jsonb_typeof(${at}) = 'array' AND ${at} @> ${bind(state, JSON.stringify([value]))}::jsonb, false)`;
      if (typeof value !== 'string') return element;
      const pattern = bind(state, containsPattern(value));
      return `(${element} OR coalesce(jsonb_typeof(${at}) = 'string' AND ${text} ${ci ? 'ILIKE' : 'LIKE'} ${pattern}, false))`;
    }
    case 'starts_with':
      return `coalesce(jsonb_typeof(${at}) = 'string' AND ${text} ${ci ? 'ILIKE' : 'LIKE'} ${bind(state, `${escapeLike(value as string)}%`)}, false)`;
    case 'is_null':
      return value ? `coalesce(${at} = 'null'::jsonb, true)` : `coalesce(${at} <> 'null'::jsonb, false)`;
  }
}

function rowIdPredicate(op: Op, value: unknown, path: string, state: State): string {
  const id = state.ctx.rowIdExpr;
  const uuid = (v: unknown, p: string) => {
    if (typeof v !== 'string' || !isUuid(v)) throw new FilterError(p, `${ROW_ID} compares with UUIDs`);
    return v.toLowerCase();
  };
  switch (op) {
    case 'eq':
      return `(${id} = ${bind(state, uuid(value, `${path}/value`))}::uuid)`;
    case 'ne':
      return `(${id} <> ${bind(state, uuid(value, `${path}/value`))}::uuid)`;
    case 'in':
      return `(${id} = ANY(${bind(
        state,
        (value as unknown[]).map((v, i) => uuid(v, `${path}/value/${i}`)),
      )}::uuid[]))`;
    default:
      throw new FilterError(`${path}/op`, `${ROW_ID} takes eq, ne or in`);
  }
}

function dimensionPredicate(name: unknown, op: Op, value: unknown, ci: boolean, path: string, state: State): string {
  if (typeof name !== 'string' || !name.length || name.length > 100)
    throw new FilterError(`${path}/dimension`, 'dimension is the name of a dimension (1..100 characters)');
  const at = state.ctx.dimensionExpr(bind(state, name));
  const text = (v: unknown, p: string) => {
    if (typeof v !== 'string') throw new FilterError(p, 'dimension values are strings');
    return v;
  };
  switch (op) {
    case 'eq':
      return ci
        ? `coalesce(lower(${at}) = lower(${bind(state, text(value, `${path}/value`))}), false)`
        : `coalesce(${at} = ${bind(state, text(value, `${path}/value`))}, false)`;
    case 'ne':
      return `(${at} IS DISTINCT FROM ${bind(state, text(value, `${path}/value`))})`;
    case 'in':
      return `coalesce(${at} = ANY(${bind(
        state,
        (value as unknown[]).map((v, i) => text(v, `${path}/value/${i}`)),
      )}::text[]), false)`;
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return `coalesce(${at} ${{ lt: '<', lte: '<=', gt: '>', gte: '>=' }[op]} ${bind(state, String(value))} COLLATE "C", false)`;
    case 'contains':
      return `coalesce(${at} ${ci ? 'ILIKE' : 'LIKE'} ${bind(state, containsPattern(text(value, `${path}/value`)))}, false)`;
    case 'starts_with':
      return `coalesce(${at} ${ci ? 'ILIKE' : 'LIKE'} ${bind(state, `${escapeLike(value as string)}%`)}, false)`;
    case 'is_null':
      return value ? `(${at} IS NULL)` : `(${at} IS NOT NULL)`;
  }
}

/** ORDER BY keys (without the words), by JSON value with NULLS LAST; the caller appends its tie-breaker. */
export function compileSort(sort: unknown, ctx: FilterContext): string {
  if (sort === undefined || sort === null) return '';
  if (!Array.isArray(sort) || sort.length > LIMITS.sortKeys)
    throw new FilterError('/', `sort is an array of at most ${LIMITS.sortKeys} keys`);
  const state: State = { ctx, predicates: 0 };
  return sort
    .map((key, i) => {
      if (!isObject(key)) throw new FilterError(`/${i}`, 'a sort key is {"field": …, "direction": "asc" | "desc"}');
      const unknown = Object.keys(key).filter((k) => k !== 'field' && k !== 'direction');
      if (unknown.length) throw new FilterError(`/${i}/${unknown[0]}`, `unknown member "${unknown[0]}" in a sort key`);
      const direction = key.direction ?? 'asc';
      if (direction !== 'asc' && direction !== 'desc')
        throw new FilterError(`/${i}/direction`, 'direction is asc or desc');
      const segments = fieldPath(key.field, `/${i}/field`, ctx);
      const expr = segments[0] === ROW_ID ? ctx.rowIdExpr : jsonAt(segments, state);
      return `${expr} ${direction === 'asc' ? 'ASC' : 'DESC'} NULLS LAST`;
    })
    .join(', ');
}

/** A jsonb object of only the selected top-level columns (absent columns stay absent). */
export function compileProjection(select: unknown, ctx: FilterContext): string {
  if (!Array.isArray(select) || select.length > LIMITS.select || !select.every((c) => typeof c === 'string')) {
    throw new FilterError('/', `select is an array of at most ${LIMITS.select} column names`);
  }
  const columns = [...new Set(select as string[])].filter((c) => c !== ROW_ID);
  columns.forEach((c, i) => {
    if (!ctx.columns.has(c)) throw new FilterError(`/${i}`, `unknown column "${c.slice(0, 100)}"`);
  });
  if (!columns.length) return `'{}'::jsonb`;
  ctx.params.push(columns);
  // Keep the keys named: jsonb_object_agg over the row's own entries, so absent columns stay absent.
  return `(SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb) FROM jsonb_each(${ctx.rowExpr}) e WHERE e.key = ANY($${ctx.params.length}::text[]))`;
}
