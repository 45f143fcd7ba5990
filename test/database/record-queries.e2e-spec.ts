import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { nameTaken, workspaceOfRecord } from '#libs/database/record-queries.js';
import { Db } from '#libs/database/unit-of-work.js';
import { openScratchDatabase, type ScratchDatabase } from '../utils/scratch-database.js';

/** The shared record queries every family's repository calls with its own table (name uniqueness, a record's workspace). */
describe('record queries', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    scratch = await openScratchDatabase('records');
    await scratch.dataSource.runMigrations({ transaction: 'each' });
    db = new Db(scratch.dataSource);
    const one = async (sql: string, params: unknown[] = []) =>
      ((await db.query(sql, params)) as Array<{ id: string }>)[0].id;
    ids.a = await one(`INSERT INTO workspaces (name) VALUES ('a') RETURNING id`);
    ids.b = await one(`INSERT INTO workspaces (name) VALUES ('b') RETURNING id`);
    ids.support = await one(`INSERT INTO datasets (workspace_id, name) VALUES ($1, 'Support') RETURNING id`, [ids.a]);
  });

  afterAll(async () => {
    await scratch?.close();
  });

  it('finds a name taken in its scope whatever its case, and not by the record being renamed or in another scope', async () => {
    const inA = { column: 'workspace_id', value: ids.a };
    expect(await nameTaken(db, 'datasets', inA, 'support')).toBe(true);
    expect(await nameTaken(db, 'datasets', inA, 'SUPPORT', null)).toBe(true);
    expect(await nameTaken(db, 'datasets', inA, 'support', ids.support)).toBe(false);
    expect(await nameTaken(db, 'datasets', inA, 'billing')).toBe(false);
    expect(await nameTaken(db, 'datasets', { column: 'workspace_id', value: ids.b }, 'support')).toBe(false);
  });

  it("answers a record's workspace, null for none", async () => {
    expect(await workspaceOfRecord(db, 'datasets', ids.support)).toBe(ids.a);
    expect(await workspaceOfRecord(db, 'datasets', ids.b)).toBeNull();
  });

  it('refuses a table or column that is not a plain name before any SQL is sent', async () => {
    await expect(
      nameTaken(db, 'datasets; DROP TABLE users', { column: 'workspace_id', value: ids.a }, 'x'),
    ).rejects.toThrow('is not a table or column name');
    await expect(nameTaken(db, 'datasets', { column: 'workspace_id OR 1=1', value: ids.a }, 'x')).rejects.toThrow(
      'is not a table or column name',
    );
    await expect(workspaceOfRecord(db, 'Datasets"', ids.support)).rejects.toThrow('is not a table or column name');
  });
});
