import { sql, type Expression, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { isUuid } from '#libs/common/uuid.js';
import { containsPattern, escapeLike } from './like.js';

/**
 * The JSON query language over dataset rows, compiled to Kysely expressions: a PostgreSQL
 * boolean for a filter, ORDER BY keys for a sort, a jsonb object for a projection. Every value
 * and every JSON path key is a bind parameter (`sql` interpolation); only operator keywords and
 * the context's expressions reach the SQL text. The caller places the expressions in its own
 * typed statement, over whatever table its context names. See docs/query-language.md.
 *
 *   Filter := {"and": [Filter…]} | {"or": [Filter…]} | {"not": Filter}
 *           | {"field": Field, "op": Op, "value"?: JSON, "case_insensitive"?: bool}
 *           | {"dimension": name, "op": Op, "value"?: JSON}
 *           | {"score": {"evaluator": name, "metric": name}, "field": "score" | "passed" | "label", "op": Op, "value"?: JSON}
 *   Field  := "column" | "column.key.key" | ["column", "key", …] | "_row_id"
 */
export interface FilterContext {
  /** The row's jsonb object, e.g. `sql.ref('r.data')`. */
  row: Expression<unknown>;
  /** The row id (uuid), e.g. `sql.ref('r.row_id')`. */
  rowId: Expression<string>;
  /** A row's value (text) of the dimension `name`, which the expression binds. */
  dimension: (name: string) => Expression<string | null>;
  /** Top-level columns of the version; a field's first segment must be one of them. */
  columns: ReadonlySet<string>;
  /**
   * The score an evaluator's metric gave the row's trace, for `score` predicates: a set of at
   * most one jsonb `{score, passed, label}` (none when the trace has no such score), placed in a
   * FROM clause. Absent: the rows have no scores, and a `score` predicate is refused.
   */
  score?: (evaluator: string, metric: string) => Expression<unknown>;
}

/** A compiled filter: a boolean over the context's row. */
export type Filter = RawBuilder<SqlBool>;

/** A compiled sort key, its direction and `NULLS LAST` included: `query.orderBy(key)`. */
export type SortKey = RawBuilder<unknown>;

/** A filter (none: every row) and sort keys, compiled for a statement over the context's table. */
export interface RowQuery {
  where?: Filter;
  orderBy: SortKey[];
}

/** `query` ordered by the sort keys (the caller's tie-breakers after them). */
export function orderedBy<D, TB extends keyof D, O>(
  query: SelectQueryBuilder<D, TB, O>,
  keys: readonly SortKey[],
): SelectQueryBuilder<D, TB, O> {
  return keys.reduce((ordered, key) => ordered.orderBy(key), query);
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

export function compileFilter(filter: unknown, ctx: FilterContext): Filter {
  return node(filter, '', 0, { ctx, predicates: 0 });
}

/** Every row: the filter of a selection that has none. */
export function everyRow(): Filter {
  return sql<SqlBool>`TRUE`;
}

/** `(a) AND (b) …` of the filters given, each parenthesised; every row when there are none. */
export function allOf(filters: readonly Expression<SqlBool>[]): Filter {
  if (!filters.length) return everyRow();
  return sql<SqlBool>`${sql.join(
    filters.map((f) => sql`(${f})`),
    sql` AND `,
  )}`;
}

/** `(filter)`: a filter placed beside other conditions of a statement, whatever its own operators. */
export function grouped(filter: Expression<SqlBool>): Filter {
  return sql<SqlBool>`(${filter})`;
}

/** The rows among `ids` (any number of them: one array parameter). */
export function rowIdIn(ctx: FilterContext, ids: readonly string[]): Filter {
  return sql<SqlBool>`${ctx.rowId} = ANY(${ids}::uuid[])`;
}

/** Comparison operators, as SQL keywords (never a value). */
const COMPARE = { lt: sql`<`, lte: sql`<=`, gt: sql`>`, gte: sql`>=` } as const;

function like(ci: boolean): RawBuilder<unknown> {
  return ci ? sql`ILIKE` : sql`LIKE`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function node(filter: unknown, path: string, depth: number, state: State): Filter {
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
      const compiled = parts.map((part, i) => node(part, `${path}/${combinator}/${i}`, depth + 1, state));
      return sql<SqlBool>`(${sql.join(compiled, combinator === 'and' ? sql` AND ` : sql` OR `)})`;
    }
  }
  if ('not' in filter) {
    if (keys.length !== 1) throw new FilterError(here, '"not" stands alone in its object');
    // A predicate on an absent field is false, never NULL, so NOT inverts it exactly.
    return sql<SqlBool>`(NOT ${node(filter.not, `${path}/not`, depth + 1, state)})`;
  }
  return predicate(filter, path, state);
}

function predicate(p: Record<string, unknown>, path: string, state: State): Filter {
  const here = path || '/';
  if (++state.predicates > LIMITS.predicates)
    throw new FilterError(here, `a filter holds at most ${LIMITS.predicates} predicates`);
  const allowed = new Set(['field', 'dimension', 'score', 'op', 'value', 'case_insensitive']);
  const unknown = Object.keys(p).filter((k) => !allowed.has(k));
  if (unknown.length)
    throw new FilterError(
      `${path}/${unknown[0]}`,
      `unknown member "${unknown[0]}"; a predicate has field (or dimension), op and value, or is and/or/not`,
    );
  if ('score' in p && 'dimension' in p)
    throw new FilterError(here, 'a predicate names a "score" or a "dimension", not both');
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
  if ('score' in p) return scorePredicate(p.score, p.field, op, value, p.case_insensitive === true, path, state);
  const segments = fieldPath(p.field, `${path}/field`, state.ctx);
  if (segments.length === 1 && segments[0] === ROW_ID) return rowIdPredicate(op, value, path, state);
  return jsonPredicate(segments, op, value, p.case_insensitive === true, state.ctx.row);
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
function jsonAt(segments: string[], row: Expression<unknown>): RawBuilder<unknown> {
  return sql`(${row} #> ${segments}::text[])`;
}

function nested(segments: string[], value: unknown): unknown {
  return segments.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}

/** `value` as a jsonb parameter (its JSON text, cast). */
function jsonb(value: unknown): RawBuilder<unknown> {
  return sql`${JSON.stringify(value)}::jsonb`;
}

function jsonPredicate(segments: string[], op: Op, value: unknown, ci: boolean, row: Expression<unknown>): Filter {
  const at = () => jsonAt(segments, row);
  const text = () => sql`(${at()} #>> '{}')`;
  const typed = (v: unknown) => (typeof v === 'number' ? sql`'number'` : sql`'string'`);
  switch (op) {
    case 'eq':
      if (ci && typeof value === 'string')
        return sql<SqlBool>`(jsonb_typeof(${at()}) = 'string' AND lower(${text()}) = lower(${value}))`;
      // Containment of a nested scalar is exact equality and can use the GIN index on data.
      if (value !== null && typeof value !== 'object') {
        return sql<SqlBool>`(${row} @> ${jsonb(nested(segments, value))} AND jsonb_typeof(${at()}) <> 'array')`;
      }
      return sql<SqlBool>`coalesce(${at()} = ${jsonb(value)}, false)`;
    case 'ne':
      return sql<SqlBool>`(${at()} IS DISTINCT FROM ${jsonb(value)})`;
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      // jsonb compares numbers numerically and strings by code point order within one type; the type guard keeps others out.
      return sql<SqlBool>`coalesce(jsonb_typeof(${at()}) = ${typed(value)} AND ${at()} ${COMPARE[op]} ${jsonb(value)}, false)`;
    case 'in': {
      const values = value as unknown[];
      if (values.every((v) => typeof v !== 'object')) {
        // One containment test per value keeps the GIN index usable.
        const each = values.map((v) => sql`${row} @> ${jsonb(nested(segments, v))}`);
        return sql<SqlBool>`(jsonb_typeof(${at()}) <> 'array' AND (${sql.join(each, sql` OR `)}))`;
      }
      return sql<SqlBool>`coalesce(${at()} = ANY(${values.map((v) => JSON.stringify(v))}::jsonb[]), false)`;
    }
    case 'contains': {
      const element = sql<SqlBool>`coalesce(jsonb_typeof(${at()}) = 'array' AND ${at()} @> ${jsonb([value])}, false)`;
      if (typeof value !== 'string') return element;
      return sql<SqlBool>`(${element} OR coalesce(jsonb_typeof(${at()}) = 'string' AND ${text()} ${like(ci)} ${containsPattern(value)}, false))`;
    }
    case 'starts_with':
      return sql<SqlBool>`coalesce(jsonb_typeof(${at()}) = 'string' AND ${text()} ${like(ci)} ${`${escapeLike(value as string)}%`}, false)`;
    case 'is_null':
      return value
        ? sql<SqlBool>`coalesce(${at()} = 'null'::jsonb, true)`
        : sql<SqlBool>`coalesce(${at()} <> 'null'::jsonb, false)`;
  }
}

/** What a `score` predicate may compare: the members of the score's jsonb. */
const SCORE_FIELDS = ['score', 'passed', 'label'] as const;

/**
 * `{"score": {"evaluator", "metric"}, "field": "score" | "passed" | "label", …}`: the operators of
 * a field over the score's jsonb; false (never NULL) when the row's trace has no such score, so
 * NOT inverts it exactly. The names are bound parameters.
 */
function scorePredicate(
  score: unknown,
  field: unknown,
  op: Op,
  value: unknown,
  ci: boolean,
  path: string,
  state: State,
): Filter {
  const of = state.ctx.score;
  if (!of) throw new FilterError(`${path}/score`, 'score predicates apply to the spans of trace datasets');
  if (!isObject(score)) throw new FilterError(`${path}/score`, 'score is {"evaluator": name, "metric": name}');
  const extra = Object.keys(score).filter((k) => k !== 'evaluator' && k !== 'metric');
  if (extra.length)
    throw new FilterError(`${path}/score/${extra[0]}`, `unknown member "${extra[0]}"; score has evaluator and metric`);
  for (const key of ['evaluator', 'metric'] as const) {
    const name = score[key];
    if (typeof name !== 'string' || !name.length || name.length > 200)
      throw new FilterError(`${path}/score/${key}`, `${key} is a name of 1..200 characters`);
  }
  if (typeof field !== 'string' || !(SCORE_FIELDS as readonly string[]).includes(field))
    throw new FilterError(`${path}/field`, `a score predicate's field is one of ${SCORE_FIELDS.join(', ')}`);
  const scored = sql.ref('ews_score.value');
  const holds = jsonPredicate([field], op, value, ci, scored);
  return sql<SqlBool>`coalesce((SELECT ${holds} FROM ${of(score.evaluator as string, score.metric as string)} AS ews_score(value)), false)`;
}

function rowIdPredicate(op: Op, value: unknown, path: string, state: State): Filter {
  const id = state.ctx.rowId;
  const uuid = (v: unknown, p: string) => {
    if (typeof v !== 'string' || !isUuid(v)) throw new FilterError(p, `${ROW_ID} compares with UUIDs`);
    return v.toLowerCase();
  };
  switch (op) {
    case 'eq':
      return sql<SqlBool>`(${id} = ${uuid(value, `${path}/value`)}::uuid)`;
    case 'ne':
      return sql<SqlBool>`(${id} <> ${uuid(value, `${path}/value`)}::uuid)`;
    case 'in':
      return sql<SqlBool>`(${id} = ANY(${(value as unknown[]).map((v, i) => uuid(v, `${path}/value/${i}`))}::uuid[]))`;
    default:
      throw new FilterError(`${path}/op`, `${ROW_ID} takes eq, ne or in`);
  }
}

function dimensionPredicate(name: unknown, op: Op, value: unknown, ci: boolean, path: string, state: State): Filter {
  if (typeof name !== 'string' || !name.length || name.length > 100)
    throw new FilterError(`${path}/dimension`, 'dimension is the name of a dimension (1..100 characters)');
  const at = state.ctx.dimension(name);
  const text = (v: unknown, p: string) => {
    if (typeof v !== 'string') throw new FilterError(p, 'dimension values are strings');
    return v;
  };
  switch (op) {
    case 'eq':
      return ci
        ? sql<SqlBool>`coalesce(lower(${at}) = lower(${text(value, `${path}/value`)}), false)`
        : sql<SqlBool>`coalesce(${at} = ${text(value, `${path}/value`)}, false)`;
    case 'ne':
      return sql<SqlBool>`(${at} IS DISTINCT FROM ${text(value, `${path}/value`)})`;
    case 'in':
      return sql<SqlBool>`coalesce(${at} = ANY(${(value as unknown[]).map((v, i) => text(v, `${path}/value/${i}`))}::text[]), false)`;
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return sql<SqlBool>`coalesce(${at} ${COMPARE[op]} ${String(value)} COLLATE "C", false)`;
    case 'contains':
      return sql<SqlBool>`coalesce(${at} ${like(ci)} ${containsPattern(text(value, `${path}/value`))}, false)`;
    case 'starts_with':
      return sql<SqlBool>`coalesce(${at} ${like(ci)} ${`${escapeLike(value as string)}%`}, false)`;
    case 'is_null':
      return value ? sql<SqlBool>`(${at} IS NULL)` : sql<SqlBool>`(${at} IS NOT NULL)`;
  }
}

/** ORDER BY keys, by JSON value with NULLS LAST; the caller orders by its tie-breaker after them. */
export function compileSort(sort: unknown, ctx: FilterContext): SortKey[] {
  if (sort === undefined || sort === null) return [];
  if (!Array.isArray(sort) || sort.length > LIMITS.sortKeys)
    throw new FilterError('/', `sort is an array of at most ${LIMITS.sortKeys} keys`);
  return sort.map((key, i) => {
    if (!isObject(key)) throw new FilterError(`/${i}`, 'a sort key is {"field": …, "direction": "asc" | "desc"}');
    const unknown = Object.keys(key).filter((k) => k !== 'field' && k !== 'direction');
    if (unknown.length) throw new FilterError(`/${i}/${unknown[0]}`, `unknown member "${unknown[0]}" in a sort key`);
    const direction = key.direction ?? 'asc';
    if (direction !== 'asc' && direction !== 'desc')
      throw new FilterError(`/${i}/direction`, 'direction is asc or desc');
    const segments = fieldPath(key.field, `/${i}/field`, ctx);
    const expr = segments[0] === ROW_ID ? ctx.rowId : jsonAt(segments, ctx.row);
    return direction === 'asc' ? sql`${expr} ASC NULLS LAST` : sql`${expr} DESC NULLS LAST`;
  });
}

/** A jsonb object of only the selected top-level columns (absent columns stay absent). */
export function compileProjection(select: unknown, ctx: FilterContext): RawBuilder<Record<string, unknown>> {
  if (!Array.isArray(select) || select.length > LIMITS.select || !select.every((c) => typeof c === 'string')) {
    throw new FilterError('/', `select is an array of at most ${LIMITS.select} column names`);
  }
  const columns = [...new Set(select as string[])].filter((c) => c !== ROW_ID);
  columns.forEach((c, i) => {
    if (!ctx.columns.has(c)) throw new FilterError(`/${i}`, `unknown column "${c.slice(0, 100)}"`);
  });
  if (!columns.length) return sql`'{}'::jsonb`;
  // Keep the keys named: jsonb_object_agg over the row's own entries, so absent columns stay absent.
  return sql`(SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb) FROM jsonb_each(${ctx.row}) e WHERE e.key = ANY(${columns}::text[]))`;
}
