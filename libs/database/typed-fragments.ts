import {
  sql,
  type AliasedRawBuilder,
  type Expression,
  type ExpressionBuilder,
  type ReferenceExpression,
  type SelectQueryBuilder,
  type SqlBool,
  type StringReference,
} from 'kysely';
import type { ObjectLiteral, Repository } from 'typeorm';
import { containsPattern } from './like.js';
import type { DatasetRows, DB, JsonObject } from './schema.js';
import { entitiesFrom } from './typed-entities.js';
import type { QueryBuilder } from './typed-queries.js';
import type { Db } from './unit-of-work.js';

/**
 * Predicates and reads the repositories' typed queries share: each a small function over the
 * schema types, so a statement names its columns once and a renamed column breaks its build.
 */

/** `lower(column) = lower(value)`: names compare case-insensitively (the `lower(name)` unique indexes serve it). */
export function sameText<TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  column: ReferenceExpression<DB, TB>,
  value: string,
): Expression<SqlBool> {
  return eb(eb.fn('lower', [column]), '=', eb.fn('lower', [eb.val(value)]));
}

/** `column ILIKE '%text%'`: contains `text` literally, case-insensitively (backslash is PostgreSQL's default LIKE escape). */
export function containsText<TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  column: ReferenceExpression<DB, TB>,
  text: string,
): Expression<SqlBool> {
  return eb(column, 'ilike', containsPattern(text));
}

/**
 * `lower(column) LIKE '%text%'` with `text` lowered here: contains it literally, case-insensitively
 * as the lists of datasets and secrets have always compared.
 */
export function lowerContains<TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  column: ReferenceExpression<DB, TB>,
  text: string,
): Expression<SqlBool> {
  return eb(eb.fn('lower', [column]), 'like', containsPattern(text.toLowerCase()));
}

/** `value = ANY(column)`: the array column holds `value` (a record's tags, a config's events). */
export function holds<TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  column: StringReference<DB, TB>,
  value: string,
): Expression<SqlBool> {
  return sql<SqlBool>`${value} = ANY(${eb.ref(column)})`;
}

/** `column = ANY(values)`: one array parameter however many values (a caller's workspaces, a project's SUTs). */
export function isAnyOf<TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  column: StringReference<DB, TB>,
  values: readonly string[],
): Expression<SqlBool> {
  return sql<SqlBool>`${eb.ref(column)} = ANY(${values})`;
}

/** `count(*)::int AS n`: how many rows, as a number (`count(*)` is an int8, which the driver answers as text). */
export function countN(): AliasedRawBuilder<number, 'n'> {
  return sql<number>`count(*)::int`.as('n');
}

/** A row of `dataset_version_rows()`: a version's row with its dimension values as one object. */
export type PublishedRow = Pick<DatasetRows, 'dataset_id' | 'row_id' | 'ordinal'> & {
  data: JsonObject;
  dimensions: Record<string, string>;
};

/**
 * The rows of version `version` of a dataset as the datasets family publishes them to the others
 * (`dataset_version_rows()`, a function PostgreSQL inlines into the statement), as alias `r`: runs,
 * analysis and SDG read them without naming its tables.
 */
export function publishedRows(datasetId: string, version: number): AliasedRawBuilder<PublishedRow, 'r'> {
  return sql<PublishedRow>`dataset_version_rows(${datasetId}, ${version})`.as('r');
}

/** Which rows of a list: `skip` rows on, at most `take`. */
export interface PageWindow {
  skip: number;
  take: number;
}

/**
 * A page's rows and how many rows match in all, counted as TypeORM's `getManyAndCount` counts:
 * a page that is neither full nor empty past the first row tells the total itself (`skip` + its
 * rows), and only otherwise does `count` run. A list shorter than a page is one statement.
 */
export async function withTotal<R>(
  rows: R[],
  window: PageWindow,
  count: () => Promise<number>,
): Promise<[R[], number]> {
  const told = rows.length < window.take && (rows.length > 0 || window.skip === 0);
  return [rows, told ? window.skip + rows.length : await count()];
}

/** Rows of one table a filter matches, before they are selected, sorted or paged. */
type Matching<TB extends keyof DB> = SelectQueryBuilder<DB, TB, object>;

/** `count(*)` of the rows `matching` selects. */
export async function countOf<TB extends keyof DB>(
  db: Db,
  matching: (q: QueryBuilder) => Matching<TB>,
): Promise<number> {
  const [{ total }] = await db.typed((q) => matching(q).select((eb) => eb.fn.countAll<string>().as('total')));
  return Number(total);
}

/**
 * A page of an entity's rows and how many rows match in all, as TypeORM's `getManyAndCount`
 * answers: the page (`matching`, sorted by `order`, OFFSET `skip` LIMIT `take`) read as entities,
 * and the count of `matching` when the page does not tell it (withTotal).
 */
export async function entityPage<T extends ObjectLiteral, TB extends keyof DB>(
  db: Db,
  repo: Repository<T>,
  matching: (q: QueryBuilder) => Matching<TB>,
  order: (query: Matching<TB>) => Matching<TB>,
  window: PageWindow,
): Promise<[T[], number]> {
  // The columns TypeORM reads for the entity (the rows' type depends on TB: entitiesFrom reads them by column).
  const columns = selectedColumns(repo) as never;
  const rows = await db.typed(
    (q) => order(matching(q)).select(columns).offset(window.skip).limit(window.take) as Matching<TB>,
  );
  const [, total] = await withTotal(rows, window, () => countOf(db, matching));
  return [entitiesFrom(repo, rows), total];
}

/**
 * Every row `matching` selects, sorted by `order`, read as entities (the columns TypeORM reads for
 * the entity, as `entityPage`): a list too short to page (a workspace's configs, a record's revisions).
 */
export async function entityList<T extends ObjectLiteral, TB extends keyof DB>(
  db: Db,
  repo: Repository<T>,
  matching: (q: QueryBuilder) => Matching<TB>,
  order: (query: Matching<TB>) => Matching<TB>,
): Promise<T[]> {
  const columns = selectedColumns(repo) as never;
  const rows = await db.typed((q) => order(matching(q)).select(columns) as Matching<TB>);
  return entitiesFrom(repo, rows);
}

/** The direction of a list's sort (libs/common/pagination.ts parseSort) as Kysely's orderBy takes it. */
export function direction(sort: { direction: 'ASC' | 'DESC' }): 'asc' | 'desc' {
  return sort.direction === 'DESC' ? 'desc' : 'asc';
}

/**
 * ORDER BY the column a list is asked to sort by (`lower(column)` when `lower`: names sort as
 * people read them), then by `tieBreaker` ascending, so that pages never overlap.
 */
export function sorted<D, TB extends keyof D, O>(
  query: SelectQueryBuilder<D, TB, O>,
  sort: { column: StringReference<D, TB>; direction: 'ASC' | 'DESC'; lower?: boolean },
  tieBreaker: StringReference<D, TB>,
): SelectQueryBuilder<D, TB, O> {
  const order = direction(sort);
  const first = sort.lower
    ? query.orderBy((eb) => eb.fn('lower', [sort.column]), order)
    : query.orderBy(sort.column, order);
  return first.orderBy(tieBreaker, 'asc');
}

/**
 * The columns of `table` TypeORM reads for `repo`'s entity: all but those it does not select by
 * default (`select: false`: a password hash, a token hash), so a typed read holds no more than
 * TypeORM's did.
 */
export function entityColumns<T extends ObjectLiteral, TB extends keyof DB & string>(
  repo: Repository<T>,
  table: TB,
): Array<keyof DB[TB] & string> {
  if (repo.metadata.tableName !== table) throw new Error(`${repo.metadata.name} is not kept in ${table}`);
  return selectedColumns(repo) as Array<keyof DB[TB] & string>;
}

function selectedColumns(repo: Repository<ObjectLiteral>): string[] {
  return repo.metadata.columns.filter((c) => c.isSelect).map((c) => c.databaseName);
}
