import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { RowsRepository } from '#src/modules/datasets/rows/rows.repository.js';
import { OPENED_DATABASE, type OpenedDatabase } from '#libs/database/data-source.factory.js';
import { Db, TransactionRunner } from '#libs/database/unit-of-work.js';
import { itOn } from '../../utils/database-mode.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * The distinct counts SQL takes over from the upload's own counting (columns past DISTINCT_CAP
 * distinct values) and gives the commit path: per key, the distinct values that are not JSON
 * null. On the embedded database the statement must leave the engine's memory as it found it:
 * its WebAssembly memory never shrinks, and the statement as it was (jsonb_each's key-value
 * pairs, sorted) grew it by about 250 bytes a row for good.
 */
describe('datasets: distinct counts in SQL', () => {
  const ROWS = 200_000;
  let t: TestApp;
  let rows: RowsRepository;
  const datasetId = randomUUID();

  beforeAll(async () => {
    t = await startTestApp();
    rows = t.app.get(RowsRepository, { strict: false });
    // Row records straight into the table (it has no foreign key): `id` and `q` unique, `c` one
    // of 7, `n` null on every other row, `o` an object (two distinct ones); a removed record and
    // one added in version 2 are not visible in version 1.
    await t.app.get(TransactionRunner).run(async () => {
      const db = t.app.get(Db);
      await db.query(
        `INSERT INTO dataset_rows (dataset_id, row_id, added_in, ordinal, data)
         SELECT $1, gen_random_uuid(), 1, g,
                jsonb_build_object('id', g, 'q', 'question ' || g, 'c', g % 7,
                                   'n', CASE WHEN g % 2 = 0 THEN NULL ELSE g END,
                                   'o', jsonb_build_object('even', g % 2 = 0))
           FROM generate_series(1, $2::int) g`,
        [datasetId, ROWS],
      );
      await db.query(
        `INSERT INTO dataset_rows (dataset_id, row_id, added_in, removed_in, ordinal, data)
         VALUES ($1, gen_random_uuid(), 1, 1, $2, '{"c": "gone", "extra": 1}'),
                ($1, gen_random_uuid(), 2, NULL, $2 + 1, '{"c": "later", "extra": 2}')`,
        [datasetId, ROWS + 1],
      );
    });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
  });

  const count = (only?: string[]) => t.app.get(TransactionRunner).run(() => rows.distinctCounts(datasetId, 1, only));

  itOn('embedded', 'PostgreSQL gives a statement’s memory back when it ends')(
    'leaves the embedded engine’s memory as it found it (200,000 rows counted twice, before anything else counted them)',
    async () => {
      const { db } = t.app.get<symbol, { db?: OpenedDatabase }>(OPENED_DATABASE, { strict: false });
      const engine = db!.pglite! as unknown as { mod: { HEAPU8: Uint8Array } };
      const before = engine.mod.HEAPU8.byteLength;
      await count();
      await count(['id', 'q']);
      // The statement as it was (jsonb_each's pairs, sorted) grew it by 25.6 MB here; as it is, by nothing.
      expect(engine.mod.HEAPU8.byteLength - before).toBeLessThanOrEqual(8 * 1024 * 1024);
    },
    120_000,
  );

  it('counts each key’s distinct non-null values in the version, every key or the ones asked for', async () => {
    const all = { id: ROWS, q: ROWS, c: 7, n: ROWS / 2, o: 2 };
    expect(await count()).toEqual(all);
    expect(await count(['id', 'n', 'o', 'absent'])).toEqual({ id: ROWS, n: ROWS / 2, o: 2 });
    // Outside a unit of work the statement runs as it is planned, with the same answer.
    expect(await rows.distinctCounts(datasetId, 1, ['c'])).toEqual({ c: 7 });
    // The planner's setting was for that statement only.
    const [setting] = await t.app.get(TransactionRunner).run(async () => {
      await rows.distinctCounts(datasetId, 1, ['c']);
      return t.app.get(Db).query<Array<{ enable_sort: string }>>('SHOW enable_sort');
    });
    expect(setting.enable_sort).toBe('on');
  }, 120_000);
});
