import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DatabaseShutdown } from '#libs/database/database-shutdown.js';
import { openDatabase, type OpenedDatabase } from '#libs/database/data-source.factory.js';
import { Db } from '#libs/database/unit-of-work.js';
import type { AppConfig } from '#libs/config/app-config.js';
import { migrations } from '#src/database/migrations/index.js';
import { createPostgresDatabase, type PostgresTestDatabase } from '../utils/database.js';
import { describeOn } from '../utils/database-mode.js';

jest.setTimeout(120_000);

/**
 * What a shutdown does with database work still holding a connection after the grace periods
 * (DatabaseShutdown): cancelled, then terminated and dropped, so the pool can end and the
 * database close; the work itself never commits.
 */
describeOn('postgres', 'aborts work on a PostgreSQL database of its own')(
  'faults: database work aborted at shutdown (PostgreSQL)',
  () => {
    let testDb: PostgresTestDatabase;
    let db: OpenedDatabase;
    let holder: pg.Client;
    let observer: pg.Client;
    let aborter: DatabaseShutdown;
    const activity = async (pids: number[]) =>
      (await observer.query('SELECT pid FROM pg_stat_activity WHERE pid = ANY($1::int[])', [pids])).rows.map(
        (r) => r.pid as number,
      );
    const waitingOnLocks = async () =>
      (
        await observer.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
      ).rows[0].n as number;

    beforeAll(async () => {
      testDb = await createPostgresDatabase();
      db = await openDatabase({ url: testDb.url, dataDir: '/nonexistent', poolSize: 4, entities: [], migrations: [] });
      aborter = new DatabaseShutdown(db.dataSource, { embedded: false } as AppConfig);
      await db.dataSource.query('CREATE TABLE shutdown_probe (id int PRIMARY KEY, note text)');
      await db.dataSource.query("INSERT INTO shutdown_probe VALUES (1, 'before')");
      holder = new pg.Client({ connectionString: testDb.url });
      await holder.connect();
      observer = new pg.Client({ connectionString: testDb.url });
      await observer.connect();
    });
    afterAll(async () => {
      await holder?.end().catch(() => undefined);
      await observer?.end().catch(() => undefined);
      await db?.close();
      await testDb?.drop();
    });

    it('cancels a statement waiting on a row lock; its transaction rolls back and the connection comes back', async () => {
      await holder.query('BEGIN');
      await holder.query('SELECT * FROM shutdown_probe WHERE id = 1 FOR UPDATE');
      const update = db.dataSource
        .transaction((m) => m.query("UPDATE shutdown_probe SET note = 'during shutdown' WHERE id = 1"))
        .then(
          () => 'committed',
          (err: { driverError?: { code?: string } }) => err.driverError?.code,
        );
      try {
        await waitUntil(async () => (await waitingOnLocks()) === 1);
        const [{ pid }] = aborter.busy();
        expect(pid).toEqual(expect.any(Number));

        expect(await aborter.abortBusy()).toBe(1);
        // Cancelled (57014), not terminated (57P01): the transaction rolled back and gave its connection back.
        expect(await update).toBe('57014');
        expect(aborter.busy()).toEqual([]);
      } finally {
        await holder.query('COMMIT');
      }
      expect((await db.dataSource.query('SELECT note FROM shutdown_probe WHERE id = 1'))[0].note).toBe('before');
    });

    it("sees and cancels a request's prepared read (Db.prepared, on a pooled connection without a query runner)", async () => {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE shutdown_probe IN ACCESS EXCLUSIVE MODE');
      const read = new Db(db.dataSource)
        .prepared('shutdown_probe_read', 'SELECT note FROM shutdown_probe WHERE id = $1', [1])
        .then(
          () => 'answered',
          (err: { code?: string }) => err.code,
        );
      try {
        await waitUntil(async () => (await waitingOnLocks()) === 1);
        const [{ pid }] = aborter.busy();
        expect(await activity([pid!])).toEqual([pid]);
        expect(await aborter.abortBusy()).toBe(1);
        expect(await read).toBe('57014');
        expect(aborter.busy()).toEqual([]);
      } finally {
        await holder.query('COMMIT');
      }
      // The connection went back to the pool in working order.
      expect(
        await new Db(db.dataSource).prepared(
          'shutdown_probe_read',
          'SELECT note FROM shutdown_probe WHERE id = $1',
          [1],
        ),
      ).toEqual([{ note: 'before' }]);
    });

    it('terminates and drops a connection whose owner does not let go (idle in its transaction)', async () => {
      const runner = db.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      await runner.query("UPDATE shutdown_probe SET note = 'never committed' WHERE id = 1");
      const [{ pid }] = aborter.busy();
      expect(await activity([pid!])).toEqual([pid]);

      expect(await aborter.abortBusy()).toBe(1);
      expect(runner.isReleased).toBe(true);
      expect(aborter.busy()).toEqual([]);
      await waitUntil(async () => (await activity([pid!])).length === 0);
      // Its row lock went with its session: another writer gets the row at once.
      await holder.query('SET lock_timeout = 2000');
      await holder.query("UPDATE shutdown_probe SET note = 'after' WHERE id = 1");
      expect((await db.dataSource.query('SELECT note FROM shutdown_probe WHERE id = 1'))[0].note).toBe('after');
      await expect(runner.query('SELECT 1')).rejects.toThrow();
    });

    it('leaves the pool able to end', async () => {
      const runner = db.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      await aborter.abortBusy();
      await expect(
        Promise.race([
          db.close().then(() => 'closed'),
          new Promise((resolve) => setTimeout(() => resolve('hung'), 10_000)),
        ]),
      ).resolves.toBe('closed');
    });
  },
);

describeOn('embedded', 'aborts work on an embedded database of its own')(
  'faults: database work aborted at shutdown (embedded)',
  () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ews-abort-'));
    const open = () => openDatabase({ dataDir, poolSize: 1, entities: [], migrations });
    let db: OpenedDatabase | undefined;

    afterAll(async () => {
      await db?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('rolls back the transaction of the one connection and drops it: who waited gets a clean connection, PGlite closes, nothing of it was committed', async () => {
      db = await open();
      const aborter = new DatabaseShutdown(db.dataSource, { embedded: true } as AppConfig);
      await db.dataSource.query('CREATE TABLE shutdown_probe (id int PRIMARY KEY)');
      const runner = db.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      await runner.query('INSERT INTO shutdown_probe VALUES (1)');
      // The only connection is taken: this waits for it.
      const waiting = db.dataSource.transaction(async (m) => {
        await m.query('INSERT INTO shutdown_probe VALUES (2)');
        return (await m.query('SELECT id FROM shutdown_probe ORDER BY id')).map((r: { id: number }) => r.id);
      });
      expect(aborter.busy()).toHaveLength(1);

      expect(await aborter.abortBusy()).toBe(1);
      expect(runner.isReleased).toBe(true);
      // Not inside the abandoned transaction: row 1 was rolled back, and this commit is its own.
      expect(await waiting).toEqual([2]);
      await db.close();
      db = undefined;

      db = await open();
      expect(
        (await db.dataSource.query('SELECT id FROM shutdown_probe ORDER BY id')).map((r: { id: number }) => r.id),
      ).toEqual([2]);
    });
  },
);

async function waitUntil(done: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
