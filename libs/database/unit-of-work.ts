import { Injectable } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  DataSource,
  type EntityManager,
  type EntityTarget,
  type ObjectLiteral,
  type QueryRunner,
  type Repository,
} from 'typeorm';
import type { Compilable, Simplify } from 'kysely';
import { poolReads } from './pool-reads.js';
import { queryBuilder, rowsOf, type AnswersRows, type QueryBuilder, type WriteQuery } from './typed-queries.js';

/**
 * The unit of work open in an async context. Mutable: when the work ends, `manager` is cleared,
 * so a callback the work left behind (a timer, an unawaited promise) no longer reaches a
 * transaction that has committed and whose connection went back to the pool.
 */
interface UnitOfWorkScope {
  manager: EntityManager | undefined;
  /** Called once the outermost transaction has committed (shared by its savepoints). */
  afterCommit: Array<() => void>;
}

const scope = new AsyncLocalStorage<UnitOfWorkScope>();

/** The open transaction's entity manager in this async context, if any. */
function openManager(): EntityManager | undefined {
  return scope.getStore()?.manager;
}

/**
 * Queues the queries of one transaction's connection: work may start several at once (a
 * `Promise.all` of repository reads), and a node-postgres client given a query while another
 * runs warns in pg 8 and fails in pg 9. The queries of a transaction run one at a time anyway.
 */
function oneQueryAtATime(runner: QueryRunner | undefined): void {
  if (!runner) return;
  const query = runner.query.bind(runner);
  let tail: Promise<unknown> = Promise.resolve();
  runner.query = ((...args: Parameters<QueryRunner['query']>) => {
    const next = tail.then(() => query(...args));
    tail = next.catch(() => undefined);
    return next;
  }) as QueryRunner['query'];
}

async function within<T>(
  manager: EntityManager | undefined,
  work: () => Promise<T>,
  afterCommit: Array<() => void> = [],
): Promise<T> {
  const store: UnitOfWorkScope = { manager, afterCommit };
  try {
    return await scope.run(store, work);
  } finally {
    store.manager = undefined;
  }
}

/**
 * What every repository reads and writes through. Inside a unit of work (TransactionRunner.run)
 * it is the open transaction's manager, carried by the async context of the request or job;
 * outside one it is the data source's. No repository is handed a manager: forgetting one used to
 * send a query outside the transaction, which waits forever on the embedded database's single
 * connection and holds a second pool connection on PostgreSQL.
 */
@Injectable()
export class Db {
  constructor(private readonly dataSource: DataSource) {}

  /** The open transaction's entity manager, or the data source's when none is open here. */
  get manager(): EntityManager {
    return openManager() ?? this.dataSource.manager;
  }

  get inTransaction(): boolean {
    return openManager() !== undefined;
  }

  /**
   * Runs `callback` once the open transaction has committed (at once when none is open here);
   * never when it rolls back. For signals other work acts on, such as an in-process notification
   * that new rows can be read.
   */
  afterCommit(callback: () => void): void {
    const store = scope.getStore();
    if (store?.manager) store.afterCommit.push(callback);
    else callback();
  }

  repository<T extends ObjectLiteral>(entity: EntityTarget<T>): Repository<T> {
    return this.manager.getRepository(entity);
  }

  /**
   * Serialises the units of work that take the same key until this one's transaction ends (a
   * transaction-scoped advisory lock): check-then-insert rules with no unique index to lean on.
   */
  async lock(key: string): Promise<void> {
    if (!this.inTransaction)
      throw new Error(`Db.lock(${key}) holds until the transaction ends: call it inside a unit of work`);
    await this.query('SELECT pg_advisory_xact_lock(hashtext($1))', [key]);
  }

  query<T = any>(sql: string, parameters?: unknown[]): Promise<T> {
    return this.manager.query(sql, parameters);
  }

  /**
   * Runs a statement built against the schema types (libs/database/schema.ts) in the open unit of
   * work, like `query`, and answers its rows typed from the schema: renaming a column breaks the
   * build of every statement that names it. For a SELECT or a write with RETURNING.
   */
  async typed<O>(build: (q: QueryBuilder) => Compilable<O> & AnswersRows<O>): Promise<Array<Simplify<O>>> {
    const compiled = build(queryBuilder).compile();
    return rowsOf<Simplify<O>>(compiled, await this.query(compiled.sql, compiled.parameters as unknown[]));
  }

  /** Runs a write without RETURNING built against the schema types, in the open unit of work. */
  async typedWrite(build: (q: QueryBuilder) => WriteQuery): Promise<void> {
    const compiled = build(queryBuilder).compile();
    await this.query(compiled.sql, compiled.parameters as unknown[]);
  }

  /**
   * A typed write without RETURNING that a long job makes once per item (a run's answers): as a
   * named prepared statement (`prepared`), planned once per connection rather than per call. On
   * the embedded database planning runs in this process, beside the requests being served. The
   * builder must compile to the same text on every call (`name` is unique to it).
   */
  async preparedWrite(name: string, build: (q: QueryBuilder) => WriteQuery): Promise<void> {
    const compiled = build(queryBuilder).compile();
    await this.prepared(name, compiled.sql, compiled.parameters as unknown[]);
  }

  /**
   * A read that every request makes (authorization, a record's view) as a named prepared
   * statement: parsed and planned once per connection instead of on every call, which on the
   * embedded database (PostgreSQL compiled to WebAssembly, in this process) cost more than
   * running it. `name` must be unique to `sql`. Inside a unit of work it is an ordinary query of
   * the open transaction. Answers the rows.
   */
  async prepared<T>(name: string, sql: string, parameters: unknown[]): Promise<T[]> {
    if (this.inTransaction) return this.query<T[]>(sql, parameters);
    return poolReads(this.dataSource).prepared<T>(name, sql, parameters);
  }
}

/**
 * Opens units of work. Everything the work calls (repositories, the audit trail, the job queue)
 * joins its transaction through the async context, and a unit of work started inside another
 * joins the outer one, so callers compose without knowing whether one is open.
 *
 * A small equivalent of `@nestjs-cls/transactional`, which cannot be loaded here: it is
 * CommonJS requiring the ESM-only NestJS 12, which Node runs but jest's ESM runtime (before
 * Node 24.9) does not (docs/decisions/0005-unit-of-work-in-async-context.md).
 */
@Injectable()
export class TransactionRunner {
  constructor(private readonly dataSource: DataSource) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (openManager()) return work();
    const afterCommit: Array<() => void> = [];
    const result = await this.dataSource.transaction((manager) => {
      oneQueryAtATime(manager.queryRunner);
      return within(manager, work, afterCommit);
    });
    for (const callback of afterCommit) callback();
    return result;
  }

  /** Runs work in a savepoint of the open transaction (a transaction of its own when none is open): its failure undoes only its own writes. */
  savepoint<T>(work: () => Promise<T>): Promise<T> {
    const open = openManager();
    if (!open) return this.run(work);
    return open.transaction((inner) => within(inner, work, scope.getStore()!.afterCommit));
  }

  /**
   * Runs work apart from the caller's transaction, on connections of its own (background work
   * started from a request, which outlives it). On the embedded database, which has one
   * connection, the work waits until the caller's transaction ends: never await it inside one.
   */
  outside<T>(work: () => Promise<T>): Promise<T> {
    return within(undefined, work);
  }
}

export class QueryOutsideTransactionError extends Error {
  constructor() {
    super(
      'a query was issued outside the open transaction of this unit of work (through the data source or a TypeORM repository ' +
        'instead of Db): on the embedded database it would wait forever for the one connection the transaction holds',
    );
    this.name = 'QueryOutsideTransactionError';
  }
}

/**
 * Makes a query outside the open transaction impossible: while a unit of work is open in the
 * current async context, the data source refuses to hand out another connection. Every query
 * TypeORM issues without a query runner of its own asks `createQueryRunner` for one, so this is
 * the one place such a query passes.
 */
export function refuseQueriesOutsideTransaction(dataSource: DataSource): void {
  const create = dataSource.createQueryRunner.bind(dataSource);
  dataSource.createQueryRunner = ((...args: Parameters<DataSource['createQueryRunner']>) => {
    if (openManager()) throw new QueryOutsideTransactionError();
    return create(...args);
  }) as DataSource['createQueryRunner'];
}
