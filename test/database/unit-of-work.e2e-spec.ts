import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { OpenedDatabase } from '#libs/database/data-source.factory.js';
import {
  Db,
  QueryOutsideTransactionError,
  refuseQueriesOutsideTransaction,
  TransactionRunner,
} from '#libs/database/unit-of-work.js';
import { createTestDatabase, openTestDatabase, type TestDatabase } from '../utils/database.js';
import { TEST_DATABASE } from '../utils/database-mode.js';

/**
 * The unit of work on both databases the service runs on: the transaction travels in the async
 * context, a query outside it is refused at once (on the embedded database's one connection it
 * would wait forever), nested units join, savepoints undo only their part, and nothing left
 * behind by a finished unit reaches its released connection.
 */
describe(`unit of work on ${TEST_DATABASE}`, () => {
  const kind = TEST_DATABASE;
  let db: OpenedDatabase;
  let testDb: TestDatabase;
  let uow: Db;
  let transactions: TransactionRunner;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    db = await openTestDatabase(testDb, 4);
    refuseQueriesOutsideTransaction(db.dataSource);
    uow = new Db(db.dataSource);
    transactions = new TransactionRunner(db.dataSource);
    await db.dataSource.query('CREATE TABLE uow_probe (id int PRIMARY KEY, note text NOT NULL)');
  });

  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  const notes = async () =>
    ((await uow.query('SELECT note FROM uow_probe ORDER BY id')) as Array<{ note: string }>).map((r) => r.note);

  it('refuses a query through the data source while a unit of work is open in the same context, at once', async () => {
    const started = Date.now();
    await expect(
      transactions.run(async () => {
        await uow.query('INSERT INTO uow_probe VALUES (1, $1)', ['inside']);
        await db.dataSource.query('SELECT 1');
      }),
    ).rejects.toBeInstanceOf(QueryOutsideTransactionError);
    expect(Date.now() - started).toBeLessThan(5_000);
    // The unit rolled back with the refusal; the connection is free again.
    expect(await notes()).toEqual([]);
    await expect(transactions.run(() => db.dataSource.manager.query('SELECT 1'))).rejects.toBeInstanceOf(
      QueryOutsideTransactionError,
    );
  });

  it('sends every repository query of the unit to its transaction, and a failure rolls all of it back', async () => {
    await expect(
      transactions.run(async () => {
        await uow.query('INSERT INTO uow_probe VALUES (2, $1)', ['first']);
        expect(uow.inTransaction).toBe(true);
        expect(await notes()).toEqual(['first']); // sees its own uncommitted write
        throw new Error('later step failed');
      }),
    ).rejects.toThrow('later step failed');
    expect(await notes()).toEqual([]);
    expect(uow.inTransaction).toBe(false);
  });

  it('joins an inner unit of work to the outer one; a savepoint undoes only its own writes', async () => {
    await transactions.run(async () => {
      await uow.query('INSERT INTO uow_probe VALUES (3, $1)', ['outer']);
      await transactions.run(() => uow.query('INSERT INTO uow_probe VALUES (4, $1)', ['joined']));
      await transactions
        .savepoint(async () => {
          await uow.query('INSERT INTO uow_probe VALUES (5, $1)', ['undone']);
          throw new Error('inner step failed');
        })
        .catch(() => undefined);
      await transactions.savepoint(() => uow.query('INSERT INTO uow_probe VALUES (6, $1)', ['kept']));
    });
    expect(await notes()).toEqual(['outer', 'joined', 'kept']);
    await uow.query('DELETE FROM uow_probe');
  });

  it('gives work a finished unit left behind the data source, not the released connection', async () => {
    let leftBehind: Promise<unknown> = Promise.resolve();
    await transactions.run(async () => {
      await uow.query('INSERT INTO uow_probe VALUES (7, $1)', ['committed']);
      leftBehind = new Promise((resolve) => setTimeout(resolve, 50)).then(() => notes());
    });
    await expect(leftBehind).resolves.toEqual(['committed']);
    await uow.query('DELETE FROM uow_probe');
  });

  it('runs queries a unit starts at once one after another on its connection (pg 9 refuses them in parallel)', async () => {
    const warnings: Error[] = [];
    const listen = (w: Error) => warnings.push(w);
    process.on('warning', listen);
    try {
      const answers = await transactions.run(() =>
        Promise.all(Array.from({ length: 10 }, (_, i) => uow.query('SELECT $1::int AS i, pg_sleep(0.01)', [i]))),
      );
      expect(answers.map((rows) => (rows as Array<{ i: number }>)[0].i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => /already executing a query/.test(w.message))).toEqual([]);
    } finally {
      process.off('warning', listen);
    }
  });

  it('runs 50 units of work in parallel contexts to completion, each with its own transaction', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => 100 + i);
    await Promise.all(
      ids.map((id) =>
        transactions.run(async () => {
          await uow.query('INSERT INTO uow_probe VALUES ($1, $2)', [id, `parallel-${id}`]);
          const mine = (await uow.query('SELECT count(*)::int AS n FROM uow_probe WHERE id = $1', [id])) as Array<{
            n: number;
          }>;
          expect(mine[0].n).toBe(1);
        }),
      ),
    );
    expect((await notes()).length).toBe(50);
  });

  it('lets work marked outside the unit use connections of its own (PostgreSQL, which has more than one)', async () => {
    if (kind === 'embedded') return expect(db.kind).toBe('embedded');
    await transactions.run(async () => {
      await uow.query('INSERT INTO uow_probe VALUES (200, $1)', ['uncommitted']);
      const seen = await transactions.outside(() =>
        uow.query('SELECT count(*)::int AS n FROM uow_probe WHERE id = 200'),
      );
      expect(seen).toEqual([{ n: 0 }]);
    });
  });
});
