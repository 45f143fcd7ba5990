import { describe, expect, it } from '@jest/globals';
import { sql, type Expression } from 'kysely';
import {
  allOf,
  compileFilter,
  compileProjection,
  compileSort,
  everyRow,
  FilterError,
  LIMITS,
  type FilterContext,
} from './query-language.js';
import { queryBuilder } from './typed-queries.js';

const ID = '0b3a0b1e-7c2a-4c1e-9d1a-1f2e3d4c5b6a';

const ctx: FilterContext = {
  row: sql.ref('r.data'),
  rowId: sql.ref('r.row_id'),
  dimension: (name) => sql<string | null>`dim(${name})`,
  columns: new Set(['lang', 'meta', 'score', 'tags', 'x.y']),
};

function compiled(expr: Expression<unknown>): { sql: string; parameters: readonly unknown[] } {
  const query = sql`SELECT ${expr}`.compile(queryBuilder);
  return { sql: query.sql.slice('SELECT '.length), parameters: query.parameters };
}

/** The statement with its placeholders unnumbered: the compiler may bind one value more than once. */
function shape(expr: Expression<unknown>): string {
  return compiled(expr).sql.replace(/\$\d+/g, '$?');
}

/** The error a filter fails with, as `pointer: message`. */
function failure(compile: () => unknown): string {
  try {
    compile();
  } catch (err) {
    if (err instanceof FilterError) return `${err.path}: ${err.message}`;
    throw err;
  }
  throw new Error('compiled');
}

// The SQL the filters compiled to when the compiler wrote text with numbered placeholders (its
// placeholders unnumbered, the context's expressions as Kysely quotes them): the same operators on
// the same expressions, so the GIN containment, the type guards and the collation are unchanged.
const SHAPES: Array<[unknown, string]> = [
  [
    { field: 'lang', op: 'eq', value: 'fr' },
    '("r"."data" @> $?::jsonb AND jsonb_typeof(("r"."data" #> $?::text[])) <> \'array\')',
  ],
  [
    { field: 'meta.lang', op: 'eq', value: 3 },
    '("r"."data" @> $?::jsonb AND jsonb_typeof(("r"."data" #> $?::text[])) <> \'array\')',
  ],
  [
    { field: 'lang', op: 'eq', value: 'Fr', case_insensitive: true },
    '(jsonb_typeof(("r"."data" #> $?::text[])) = \'string\' AND lower((("r"."data" #> $?::text[]) #>> \'{}\')) = lower($?))',
  ],
  [{ field: 'lang', op: 'eq', value: { a: 1 } }, 'coalesce(("r"."data" #> $?::text[]) = $?::jsonb, false)'],
  [{ field: 'lang', op: 'eq', value: null }, 'coalesce(("r"."data" #> $?::text[]) = $?::jsonb, false)'],
  [{ field: 'lang', op: 'ne', value: 'fr' }, '(("r"."data" #> $?::text[]) IS DISTINCT FROM $?::jsonb)'],
  [
    { field: 'score', op: 'gte', value: 7 },
    'coalesce(jsonb_typeof(("r"."data" #> $?::text[])) = \'number\' AND ("r"."data" #> $?::text[]) >= $?::jsonb, false)',
  ],
  [
    { field: 'lang', op: 'lt', value: 'm' },
    'coalesce(jsonb_typeof(("r"."data" #> $?::text[])) = \'string\' AND ("r"."data" #> $?::text[]) < $?::jsonb, false)',
  ],
  [
    { field: 'lang', op: 'in', value: ['fr', 'de', 3] },
    '(jsonb_typeof(("r"."data" #> $?::text[])) <> \'array\' AND ("r"."data" @> $?::jsonb OR "r"."data" @> $?::jsonb OR "r"."data" @> $?::jsonb))',
  ],
  [
    { field: 'tags', op: 'contains', value: 'a_%b' },
    '(coalesce(jsonb_typeof(("r"."data" #> $?::text[])) = \'array\' AND ("r"."data" #> $?::text[]) @> $?::jsonb, false) OR coalesce(jsonb_typeof(("r"."data" #> $?::text[])) = \'string\' AND (("r"."data" #> $?::text[]) #>> \'{}\') LIKE $?, false))',
  ],
  [
    { field: 'tags', op: 'contains', value: 'x', case_insensitive: true },
    '(coalesce(jsonb_typeof(("r"."data" #> $?::text[])) = \'array\' AND ("r"."data" #> $?::text[]) @> $?::jsonb, false) OR coalesce(jsonb_typeof(("r"."data" #> $?::text[])) = \'string\' AND (("r"."data" #> $?::text[]) #>> \'{}\') ILIKE $?, false))',
  ],
  [
    { field: 'tags', op: 'contains', value: 4 },
    'coalesce(jsonb_typeof(("r"."data" #> $?::text[])) = \'array\' AND ("r"."data" #> $?::text[]) @> $?::jsonb, false)',
  ],
  [
    { field: 'lang', op: 'starts_with', value: 'f%' },
    'coalesce(jsonb_typeof(("r"."data" #> $?::text[])) = \'string\' AND (("r"."data" #> $?::text[]) #>> \'{}\') LIKE $?, false)',
  ],
  [
    { field: 'lang', op: 'starts_with', value: 'f', case_insensitive: true },
    'coalesce(jsonb_typeof(("r"."data" #> $?::text[])) = \'string\' AND (("r"."data" #> $?::text[]) #>> \'{}\') ILIKE $?, false)',
  ],
  [{ field: 'lang', op: 'is_null' }, 'coalesce(("r"."data" #> $?::text[]) = \'null\'::jsonb, true)'],
  [{ field: 'lang', op: 'is_null', value: false }, 'coalesce(("r"."data" #> $?::text[]) <> \'null\'::jsonb, false)'],
  [{ field: '_row_id', op: 'eq', value: '0B3A0B1E-7C2A-4C1E-9D1A-1F2E3D4C5B6A' }, '("r"."row_id" = $?::uuid)'],
  [{ field: '_row_id', op: 'ne', value: '0b3a0b1e-7c2a-4c1e-9d1a-1f2e3d4c5b6a' }, '("r"."row_id" <> $?::uuid)'],
  [{ field: '_row_id', op: 'in', value: ['0b3a0b1e-7c2a-4c1e-9d1a-1f2e3d4c5b6a'] }, '("r"."row_id" = ANY($?::uuid[]))'],
  [{ dimension: 'topic', op: 'eq', value: 'x' }, 'coalesce(dim($?) = $?, false)'],
  [{ dimension: 'topic', op: 'eq', value: 'x', case_insensitive: true }, 'coalesce(lower(dim($?)) = lower($?), false)'],
  [{ dimension: 'topic', op: 'ne', value: 'x' }, '(dim($?) IS DISTINCT FROM $?)'],
  [{ dimension: 'topic', op: 'in', value: ['x', 'y'] }, 'coalesce(dim($?) = ANY($?::text[]), false)'],
  [{ dimension: 'topic', op: 'gt', value: 'b' }, 'coalesce(dim($?) > $? COLLATE "C", false)'],
  [{ dimension: 'topic', op: 'contains', value: 'x' }, 'coalesce(dim($?) LIKE $?, false)'],
  [{ dimension: 'topic', op: 'starts_with', value: 'x', case_insensitive: true }, 'coalesce(dim($?) ILIKE $?, false)'],
  [{ dimension: 'topic', op: 'is_null' }, '(dim($?) IS NULL)'],
  [{ dimension: 'topic', op: 'is_null', value: false }, '(dim($?) IS NOT NULL)'],
  [
    {
      and: [
        { field: 'lang', op: 'eq', value: 'de' },
        { or: [{ field: 'score', op: 'gte', value: 7 }, { not: { field: 'lang', op: 'is_null' } }] },
      ],
    },
    '(("r"."data" @> $?::jsonb AND jsonb_typeof(("r"."data" #> $?::text[])) <> \'array\') AND (coalesce(jsonb_typeof(("r"."data" #> $?::text[])) = \'number\' AND ("r"."data" #> $?::text[]) >= $?::jsonb, false) OR (NOT coalesce(("r"."data" #> $?::text[]) = \'null\'::jsonb, true))))',
  ],
];

describe('compileFilter', () => {
  it.each(SHAPES)('compiles %j to the same SQL as before', (filter, expected) => {
    expect(shape(compileFilter(filter, ctx))).toBe(expected);
  });

  it('binds every value and path key, in the order the SQL names them', () => {
    expect(compiled(compileFilter({ field: 'meta.lang', op: 'eq', value: 'fr' }, ctx)).parameters).toEqual([
      '{"meta":{"lang":"fr"}}',
      ['meta', 'lang'],
    ]);
    expect(compiled(compileFilter({ field: 'tags', op: 'contains', value: 'a_%b' }, ctx)).parameters).toEqual([
      ['tags'],
      ['tags'],
      '["a_%b"]',
      ['tags'],
      ['tags'],
      '%a\\_\\%b%',
    ]);
    expect(compiled(compileFilter({ field: '_row_id', op: 'in', value: [ID.toUpperCase()] }, ctx)).parameters).toEqual([
      [ID],
    ]);
    expect(compiled(compileFilter({ dimension: 'topic', op: 'gte', value: 'b' }, ctx)).parameters).toEqual([
      'topic',
      'b',
    ]);
  });

  it('keeps hostile names and values out of the SQL text', () => {
    const hostile = "x'); DROP TABLE dataset_rows; --";
    const filter = {
      or: [
        { field: ['x.y', hostile], op: 'eq', value: hostile },
        { dimension: hostile, op: 'eq', value: hostile },
      ],
    };
    const { sql: text, parameters } = compiled(compileFilter(filter, ctx));
    expect(text).not.toContain('DROP');
    expect(parameters).toContain(hostile);
    expect(parameters).toContainEqual(['x.y', hostile]);
  });

  it('finds a column whose name has dots by the longest prefix', () => {
    expect(compiled(compileFilter({ field: 'x.y.z', op: 'is_null' }, ctx)).parameters).toEqual([['x.y', 'z']]);
  });

  it('answers each broken filter with its JSON pointer and message', () => {
    expect(failure(() => compileFilter([], ctx))).toBe('/: a filter must be a JSON object');
    expect(failure(() => compileFilter({ and: [] }, ctx))).toBe('/and: "and" takes a non-empty array of filters');
    expect(failure(() => compileFilter({ and: [{}], or: [] }, ctx))).toBe(
      '/: "and" stands alone in its object; found also or',
    );
    expect(failure(() => compileFilter({ not: {}, x: 1 }, ctx))).toBe('/: "not" stands alone in its object');
    expect(failure(() => compileFilter({ and: [{ field: 'nope', op: 'eq', value: 1 }] }, ctx))).toBe(
      '/and/0/field: unknown column "nope"; the version has "lang", "meta", "score", "tags", "x.y"',
    );
    expect(failure(() => compileFilter({ field: 'lang', op: 'like' }, ctx))).toMatch(/^\/op: op must be one of eq, ne/);
    expect(failure(() => compileFilter({ field: 'lang', op: 'gt', value: true }, ctx))).toBe(
      '/value: gt takes a number or a string',
    );
    expect(failure(() => compileFilter({ field: 'lang', op: 'in', value: [1, null] }, ctx))).toBe(
      '/value/1: in takes strings, numbers or booleans',
    );
    expect(failure(() => compileFilter({ field: '_row_id', op: 'in', value: [ID, 'x'] }, ctx))).toBe(
      '/value/1: _row_id compares with UUIDs',
    );
    expect(failure(() => compileFilter({ field: '_row_id', op: 'gt', value: ID }, ctx))).toBe(
      '/op: _row_id takes eq, ne or in',
    );
    expect(failure(() => compileFilter({ dimension: 'topic', op: 'eq', value: 1 }, ctx))).toBe(
      '/value: dimension values are strings',
    );
    expect(failure(() => compileFilter({ field: 'lang', op: 'ne', value: 1, case_insensitive: true }, ctx))).toBe(
      '/case_insensitive: case_insensitive is a boolean, for eq, contains and starts_with',
    );
    expect(failure(() => compileFilter({ field: 'lang', op: 'eq', value: 1, extra: 1 }, ctx))).toMatch(
      /^\/extra: unknown member "extra"/,
    );
  });

  it('holds its limits: depth, predicates, string length, path segments', () => {
    let deep: unknown = { field: 'lang', op: 'is_null' };
    for (let i = 0; i <= LIMITS.depth; i++) deep = { not: deep };
    expect(failure(() => compileFilter(deep, ctx))).toMatch(/filters nest at most 10 levels deep$/);
    const many = { or: Array.from({ length: LIMITS.predicates + 1 }, () => ({ field: 'lang', op: 'is_null' })) };
    expect(failure(() => compileFilter(many, ctx))).toBe('/or/200: a filter holds at most 200 predicates');
    const long = 'x'.repeat(LIMITS.string + 1);
    expect(failure(() => compileFilter({ field: 'lang', op: 'contains', value: long }, ctx))).toBe(
      '/value: strings in filters are at most 10000 characters',
    );
    const path = ['meta', ...Array.from({ length: LIMITS.pathSegments }, (_, i) => `k${i}`)];
    expect(failure(() => compileFilter({ field: path, op: 'is_null' }, ctx))).toBe(
      '/field: a field path has at most 10 segments',
    );
  });
});

describe('score predicates', () => {
  const scored: FilterContext = {
    ...ctx,
    score: (evaluator, metric) => sql`score_of(${evaluator}, ${metric})`,
  };

  it("compiles a field's operator over the score's jsonb, false when the trace has none, names bound", () => {
    const filter = { score: { evaluator: 'quality', metric: 'helpfulness' }, field: 'score', op: 'lte', value: 0.5 };
    expect(shape(compileFilter(filter, scored))).toBe(
      'coalesce((SELECT coalesce(jsonb_typeof(("ews_score"."value" #> $?::text[])) = \'number\' AND ("ews_score"."value" #> $?::text[]) <= $?::jsonb, false) FROM score_of($?, $?) AS ews_score(value)), false)',
    );
    expect(compiled(compileFilter(filter, scored)).parameters).toEqual([
      ['score'],
      ['score'],
      '0.5',
      'quality',
      'helpfulness',
    ]);
    // NOT of a predicate that is never NULL inverts it exactly.
    expect(shape(compileFilter({ not: { ...filter, field: 'passed', op: 'eq', value: false } }, scored))).toMatch(
      /^\(NOT coalesce\(\(SELECT \("ews_score"\."value" @> \$\?::jsonb AND/,
    );
  });

  it('keeps hostile evaluator and metric names out of the SQL text', () => {
    const hostile = "q'); DELETE FROM trace_scores; --";
    const { sql: text, parameters } = compiled(
      compileFilter(
        { score: { evaluator: hostile, metric: hostile }, field: 'label', op: 'eq', value: hostile },
        scored,
      ),
    );
    expect(text).not.toContain('DELETE');
    expect(parameters.filter((p) => p === hostile)).toHaveLength(2);
  });

  it('answers each broken score predicate with its pointer', () => {
    const base = { score: { evaluator: 'quality', metric: 'helpfulness' }, field: 'score', op: 'gt', value: 0 };
    expect(failure(() => compileFilter(base, ctx))).toBe(
      '/score: score predicates apply to the spans of trace datasets',
    );
    expect(failure(() => compileFilter({ ...base, score: 'quality' }, scored))).toBe(
      '/score: score is {"evaluator": name, "metric": name}',
    );
    expect(failure(() => compileFilter({ ...base, score: { evaluator: 'quality' } }, scored))).toBe(
      '/score/metric: metric is a name of 1..200 characters',
    );
    expect(failure(() => compileFilter({ ...base, score: { ...base.score, version: 2 } }, scored))).toBe(
      '/score/version: unknown member "version"; score has evaluator and metric',
    );
    expect(failure(() => compileFilter({ ...base, field: 'reason' }, scored))).toBe(
      "/field: a score predicate's field is one of score, passed, label",
    );
    expect(failure(() => compileFilter({ ...base, dimension: 'topic' }, scored))).toBe(
      '/: a predicate names a "score" or a "dimension", not both',
    );
    expect(failure(() => compileFilter({ not: { ...base, op: 'gt', value: null } }, scored))).toBe(
      '/not/value: gt takes a number or a string',
    );
  });
});

describe('compileSort', () => {
  it('orders by the JSON value at each path, nulls last, in the SQL it had', () => {
    const keys = compileSort(
      [{ field: 'score', direction: 'desc' }, { field: 'meta.lang' }, { field: '_row_id' }],
      ctx,
    );
    expect(keys.map(shape).join(', ')).toBe(
      '("r"."data" #> $?::text[]) DESC NULLS LAST, ("r"."data" #> $?::text[]) ASC NULLS LAST, "r"."row_id" ASC NULLS LAST',
    );
    expect(keys.flatMap((k) => compiled(k).parameters)).toEqual([['score'], ['meta', 'lang']]);
    expect(compileSort(undefined, ctx)).toEqual([]);
  });

  it('answers a broken sort with its pointer', () => {
    expect(failure(() => compileSort({}, ctx))).toBe('/: sort is an array of at most 5 keys');
    expect(failure(() => compileSort([{ field: 'lang', direction: 'up' }], ctx))).toBe(
      '/0/direction: direction is asc or desc',
    );
    expect(failure(() => compileSort([{ field: 'lang', by: 1 }], ctx))).toBe(
      '/0/by: unknown member "by" in a sort key',
    );
  });
});

describe('compileProjection', () => {
  it('selects the named columns of the row, binding their names', () => {
    const projection = compileProjection(['lang', 'score', '_row_id', 'lang'], ctx);
    expect(shape(projection)).toBe(
      `(SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb) FROM jsonb_each("r"."data") e WHERE e.key = ANY($?::text[]))`,
    );
    expect(compiled(projection).parameters).toEqual([['lang', 'score']]);
    expect(shape(compileProjection(['_row_id'], ctx))).toBe(`'{}'::jsonb`);
    expect(failure(() => compileProjection(['lang', 'nope'], ctx))).toBe('/1: unknown column "nope"');
  });
});

describe('allOf', () => {
  it('joins filters with AND, each in parentheses, and is every row when given none', () => {
    const both = allOf([compileFilter({ field: 'lang', op: 'is_null' }, ctx), everyRow()]);
    expect(shape(both)).toBe(`(coalesce(("r"."data" #> $?::text[]) = 'null'::jsonb, true)) AND (TRUE)`);
    expect(shape(allOf([]))).toBe('TRUE');
  });
});
