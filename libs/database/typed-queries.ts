import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable,
  type CompiledQuery,
  type DeleteResult,
  type InsertResult,
  type MergeResult,
  type UpdateResult,
} from 'kysely';
import type { DB } from './schema.js';

/**
 * Kysely as a query compiler only: it builds statements against the generated schema types
 * (libs/database/schema.ts) and compiles them to `{ sql, parameters }`, which `Db` runs on the
 * open unit of work's connection. Its driver connects nowhere (a second pool would bypass the
 * transaction in context and wait forever on the embedded database's single connection).
 */
export type QueryBuilder = Kysely<DB>;

export const queryBuilder: QueryBuilder = new Kysely<DB>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

type WriteResult = InsertResult | UpdateResult | DeleteResult | MergeResult;

/** A write without RETURNING: it answers no rows. */
export type WriteQuery = Compilable<WriteResult>;

/** Refuses, at compile time, a write without RETURNING where rows are expected (its "row" is a write result). */
export type AnswersRows<O> = O extends WriteResult
  ? { 'a write without RETURNING answers no rows: Db.typedWrite': never }
  : unknown;

/**
 * TypeORM's postgres driver answers an UPDATE or DELETE as `[rows, affected]` and anything else
 * as its rows: the rows either way.
 */
export function rowsOf<O>(compiled: CompiledQuery<unknown>, result: unknown): O[] {
  const kind = compiled.query.kind;
  if (kind === 'UpdateQueryNode' || kind === 'DeleteQueryNode') return (result as [O[], number])[0];
  return result as O[];
}

/**
 * A table's row as a repository reads it: the schema's columns, with some of them (a jsonb
 * column, a text column held by a CHECK constraint) given the type the application knows they
 * hold. Only the table's columns can be narrowed, so renaming one breaks the type.
 */
export type NarrowedRow<
  Row,
  Narrowing extends { [K in keyof Narrowing]: K extends keyof Row ? unknown : never },
> = Omit<Row, keyof Narrowing> & Narrowing;
