import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { OpenedDatabase } from '#libs/database/data-source.factory.js';
import type { DB } from '#libs/database/schema.js';
import type { QueryBuilder } from '#libs/database/typed-queries.js';
import {
  containsText,
  countOf,
  entityColumns,
  entityList,
  entityPage,
  holds,
  sameText,
  sorted,
} from '#libs/database/typed-fragments.js';
import { Db } from '#libs/database/unit-of-work.js';
import { DatasetEntity } from '#src/modules/datasets/entities/dataset.entity.js';
import { createTestDatabase, openTestDatabase, type TestDatabase } from '../utils/database.js';
import { TEST_DATABASE } from '../utils/database-mode.js';

/**
 * The predicates, sorts and pages the repositories' typed queries share, on datasets (a name, an
 * array of tags): what they match and how a page and its total come back.
 */
describe(`typed query fragments on ${TEST_DATABASE}`, () => {
  let opened: OpenedDatabase;
  let testDb: TestDatabase;
  let db: Db;
  let workspaceId: string;
  const names = ['beta', 'Alpha', '100%', 'alpha_2', 'Gamma'];

  const inWorkspace = (q: QueryBuilder) => q.selectFrom('datasets').where('workspace_id', '=', workspaceId);

  beforeAll(async () => {
    testDb = await createTestDatabase();
    opened = await openTestDatabase(testDb, 2, [DatasetEntity]);
    db = new Db(opened.dataSource);
    const [workspace] = await db.typed((q) => q.insertInto('workspaces').values({ name: 'fragments' }).returning('id'));
    workspaceId = workspace.id;
    await db.typedWrite((q) =>
      q
        .insertInto('datasets')
        .values(names.map((name, i) => ({ workspace_id: workspaceId, name, tags: i % 2 ? ['odd'] : ['even'] }))),
    );
  });

  afterAll(async () => {
    await opened?.close();
    await testDb?.drop();
  });

  const namesWhere = async (
    where: (eb: ExpressionBuilder<DB, 'datasets'>) => Expression<SqlBool>,
  ): Promise<string[]> => {
    const rows = await db.typed((q) => inWorkspace(q).select('name').where(where).orderBy('name'));
    return rows.map((r) => r.name);
  };

  it('compares text case-insensitively, matches LIKE wildcards literally, and finds a value in an array', async () => {
    expect(await namesWhere((eb) => sameText(eb, 'name', 'ALPHA'))).toEqual(['Alpha']);
    expect(await namesWhere((eb) => containsText(eb, 'name', 'ALPHA'))).toEqual(['Alpha', 'alpha_2']);
    expect(await namesWhere((eb) => containsText(eb, 'name', '_'))).toEqual(['alpha_2']);
    expect(await namesWhere((eb) => containsText(eb, 'name', '0%'))).toEqual(['100%']);
    expect(await namesWhere((eb) => holds(eb, 'tags', 'odd'))).toEqual(['Alpha', 'alpha_2']);
  });

  it('answers a sorted page as entities with the total of all matching rows, past the last page too', async () => {
    const repo = db.repository(DatasetEntity);
    const byName = { column: 'name', direction: 'ASC', lower: true } as const;
    const [page, total] = await entityPage(db, repo, inWorkspace, (query) => sorted(query, byName, 'id'), {
      skip: 1,
      take: 2,
    });
    expect(page[0]).toBeInstanceOf(DatasetEntity);
    // Not selected by default (`select: false`), by TypeORM nor here.
    expect(entityColumns(repo, 'datasets')).not.toContain('writing_version');
    expect(page[0].writingVersion).toBeUndefined();
    expect(page.map((d) => d.name)).toEqual(['Alpha', 'alpha_2']);
    expect(total).toBe(names.length);
    const [beyond, counted] = await entityPage(
      db,
      repo,
      inWorkspace,
      (query) => sorted(query, { ...byName, direction: 'DESC' }, 'id'),
      { skip: 10, take: 2 },
    );
    expect(beyond).toEqual([]);
    expect(counted).toBe(names.length);
  });

  it('answers every matching row as entities in the order asked, and counts them', async () => {
    const repo = db.repository(DatasetEntity);
    const odd = (q: QueryBuilder) => inWorkspace(q).where((eb) => holds(eb, 'tags', 'odd'));
    const list = await entityList(db, repo, odd, (query) => query.orderBy('name', 'desc'));
    expect(list.every((d) => d instanceof DatasetEntity)).toBe(true);
    // Plain ORDER BY name: the collation's order, as TypeORM's `order: { name: 'DESC' }` gave.
    expect(
      list
        .map((d) => d.name)
        .sort()
        .reverse(),
    ).toEqual(['alpha_2', 'Alpha']);
    expect(list.map((d) => d.name)).toHaveLength(2);
    expect(list[0].writingVersion).toBeUndefined();
    expect(list[0].tags).toEqual(['odd']);
    expect(await countOf(db, odd)).toBe(2);
    expect(await countOf(db, inWorkspace)).toBe(names.length);
  });
});
