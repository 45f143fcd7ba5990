import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { JobOrder1765700000000 } from '#src/database/migrations/1765700000000-job-order.js';
import { migrationsUpTo, openScratchDatabase, type ScratchDatabase } from '../utils/scratch-database.js';

/**
 * The job-order migration numbers the jobs already queued in their creation order (ties on the
 * clock broken by id, as the old order did), and every job enqueued after it gets the next number.
 */
describe('the job-order migration', () => {
  let scratch: ScratchDatabase;
  let db: DataSource;

  beforeAll(async () => {
    scratch = await openScratchDatabase('job_order', migrationsUpTo(JobOrder1765700000000));
    db = scratch.dataSource;
    await db.runMigrations({ transaction: 'each' });
    await db.undoLastMigration({ transaction: 'each' });
    await db.query(
      `INSERT INTO jobs (type, created_at) VALUES ('b', '2026-01-02'), ('a', '2026-01-01'), ('c', '2026-01-03')`,
    );
  });

  afterAll(async () => {
    await scratch?.close();
  });

  it('numbers existing jobs by creation, continues after them, and goes back down', async () => {
    await db.runMigrations({ transaction: 'each' });
    await db.query(`INSERT INTO jobs (type, created_at) VALUES ('d', '2025-01-01')`);
    const rows: Array<{ type: string; seq: string }> = await db.query('SELECT type, seq FROM jobs ORDER BY seq');
    expect(rows).toEqual([
      { type: 'a', seq: '1' },
      { type: 'b', seq: '2' },
      { type: 'c', seq: '3' },
      { type: 'd', seq: '4' },
    ]);
    await db.undoLastMigration({ transaction: 'each' });
    const columns: unknown[] = await db.query(
      `SELECT 1 FROM information_schema.columns WHERE table_name = 'jobs' AND column_name = 'seq'`,
    );
    expect(columns).toHaveLength(0);
  });
});
