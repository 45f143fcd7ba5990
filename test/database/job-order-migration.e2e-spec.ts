import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { openDatabase, type OpenedDatabase } from '../../libs/database/data-source.factory.js';
import { JobOrder1765700000000 } from '../../src/database/migrations/1765700000000-job-order.js';
import { migrations as all } from '../../src/database/migrations/index.js';
import { databaseUrl, withAdminClient } from '../utils/database.js';
import { onPostgres } from '../utils/database-mode.js';

/** The migrations up to this one: the later ones stay out, so `undoLastMigration` undoes this one. */
const migrations = all.slice(0, all.indexOf(JobOrder1765700000000) + 1);

/**
 * The job-order migration numbers the jobs already queued in their creation order (ties on the
 * clock broken by id, as the old order did), and every job enqueued after it gets the next number.
 */
describe('the job-order migration', () => {
  const name = `ews_job_order_${process.pid}_${Date.now().toString(36)}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-job-order-'));
  let opened: OpenedDatabase;
  let db: DataSource;

  beforeAll(async () => {
    if (onPostgres) await withAdminClient((client) => client.query(`CREATE DATABASE ${name}`));
    opened = await openDatabase({
      url: onPostgres ? databaseUrl(name) : undefined,
      dataDir,
      poolSize: 2,
      entities: [],
      migrations,
    });
    db = opened.dataSource;
    await db.runMigrations({ transaction: 'each' });
    await db.undoLastMigration({ transaction: 'each' });
    await db.query(
      `INSERT INTO jobs (type, created_at) VALUES ('b', '2026-01-02'), ('a', '2026-01-01'), ('c', '2026-01-03')`,
    );
  });

  afterAll(async () => {
    await opened?.close();
    if (onPostgres) await withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    rmSync(dataDir, { recursive: true, force: true });
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
