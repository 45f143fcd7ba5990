import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'kysely';
import type { OpenedDatabase } from '#libs/database/data-source.factory.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';
import { Db, refuseQueriesOutsideTransaction, TransactionRunner } from '#libs/database/unit-of-work.js';
import { DatasetEntity } from '#src/modules/datasets/entities/dataset.entity.js';
import { createTestDatabase, openTestDatabase, type TestDatabase } from '../utils/database.js';
import { TEST_DATABASE } from '../utils/database-mode.js';

/**
 * Statements built against libs/database/schema.ts run through Db on the open unit of work (on
 * the embedded database's one connection a second connection would wait forever), and what
 * comes back is what the generated types claim: Date for timestamptz, string for int8, parsed
 * jsonb, arrays as arrays.
 */
describe(`typed queries on ${TEST_DATABASE}`, () => {
  let opened: OpenedDatabase;
  let testDb: TestDatabase;
  let db: Db;
  let transactions: TransactionRunner;
  let workspaceId: string;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    opened = await openTestDatabase(testDb, 2, [DatasetEntity]);
    refuseQueriesOutsideTransaction(opened.dataSource);
    db = new Db(opened.dataSource);
    transactions = new TransactionRunner(opened.dataSource);
    const [workspace] = await db.typed((q) =>
      q.insertInto('workspaces').values({ name: 'typed' }).returning(['id', 'created_at', 'embedding_config']),
    );
    workspaceId = workspace.id;
  });

  afterAll(async () => {
    await opened?.close();
    await testDb?.drop();
  });

  it('answers rows of the types the schema states', async () => {
    await db.typedWrite((q) =>
      q.insertInto('datasets').values({ workspace_id: workspaceId, name: 'rows', tags: ['a'] }),
    );
    const [row] = await db.typed((q) =>
      q
        .selectFrom('datasets')
        .select(['id', 'created_at', 'next_ordinal', 'tags', 'version'])
        .where('workspace_id', '=', workspaceId),
    );
    expect(row.created_at).toBeInstanceOf(Date);
    expect(typeof row.next_ordinal).toBe('string');
    expect(row.tags).toEqual(['a']);
    expect(typeof row.version).toBe('number');
    const [workspace] = await db.typed((q) =>
      q.selectFrom('workspaces').select('embedding_config').where('id', '=', workspaceId),
    );
    expect(workspace.embedding_config).toEqual({ provider: 'local' });
  });

  it("gives rows of an entity's table back as that entity, as TypeORM hydrates it (column names, transformers)", async () => {
    await db.typedWrite((q) =>
      q
        .insertInto('datasets')
        .values({ workspace_id: workspaceId, name: 'entity', tags: ['x', 'y'], next_ordinal: '41' }),
    );
    const repo = db.repository(DatasetEntity);
    const rows = await db.typed((q) =>
      q.selectFrom('datasets').selectAll().where('workspace_id', '=', workspaceId).where('name', '=', 'entity'),
    );
    const [typed] = entitiesFrom(repo, rows);
    const loaded = await repo.findOneByOrFail({ workspaceId, name: 'entity' });
    expect(typed).toBeInstanceOf(DatasetEntity);
    expect(typed).toEqual(loaded);
    // next_ordinal's transformer: int8 text from the driver, a number on the entity.
    expect(typed.nextOrdinal).toBe(41);
    expect(typed.tags).toEqual(['x', 'y']);
  });

  it("answers the rows of an UPDATE or DELETE with RETURNING (not the driver's [rows, affected])", async () => {
    const renamed = await db.typed((q) =>
      q
        .updateTable('workspaces')
        .set({ description: 'renamed' })
        .where('id', '=', workspaceId)
        .returning(['id', 'description']),
    );
    expect(renamed).toEqual([{ id: workspaceId, description: 'renamed' }]);
    const none = await db.typed((q) =>
      q.deleteFrom('datasets').where('workspace_id', '=', workspaceId).where('name', '=', 'absent').returning('id'),
    );
    expect(none).toEqual([]);
  });

  it('runs in the open unit of work: its writes roll back with it, and no other connection is asked for', async () => {
    await expect(
      transactions.run(async () => {
        await db.typedWrite((q) =>
          q
            .updateTable('workspaces')
            .set({ description: 'inside', version: sql`version + 1` })
            .where('id', '=', workspaceId),
        );
        const [inside] = await db.typed((q) =>
          q.selectFrom('workspaces').select('description').where('id', '=', workspaceId),
        );
        expect(inside.description).toBe('inside');
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const [after] = await db.typed((q) =>
      q.selectFrom('workspaces').select('description').where('id', '=', workspaceId),
    );
    expect(after.description).toBe('renamed');
  });

  it('refuses, at compile time, a write without RETURNING where rows are expected', async () => {
    // @ts-expect-error: an UPDATE without RETURNING answers no rows; typedWrite runs it.
    await db.typed((q) => q.updateTable('workspaces').set({ description: 'x' }).where('id', '=', workspaceId));
    // @ts-expect-error: a column the table does not have.
    await expect(db.typed((q) => q.selectFrom('workspaces').select('no_such_column'))).rejects.toThrow();
  });
});
