import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { EMBEDDED_DEFERRED_GIN_ROWS } from '#libs/database/bulk-writer.js';
import { Db, TransactionRunner } from '#libs/database/unit-of-work.js';
import { RowsRepository } from '#src/modules/datasets/rows/rows.repository.js';
import { itOn, onEmbedded } from '../../utils/database-mode.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * What a bulk write of dataset rows holds while it runs. The row index (GIN, jsonb_path_ops) takes
 * new entries into its pending list: on PostgreSQL the list may grow to 128 MB during a load and a
 * queued job merges it on its own connection; on the embedded database, whose engine runs on the
 * service's thread, it stays at 4 MB (migration 1766400000000), and a bulk write defers the merge
 * for its first EMBEDDED_DEFERRED_GIN_ROWS rows only, then merges a few megabytes at a time
 * instead of leaving one statement that holds the service for many seconds. And on the embedded
 * database a write's COPY statements let the event loop turn between them (EngineTurns), so
 * requests are answered while an upload runs (docs/performance.md#dataset-uploads).
 */
describe('datasets: what a bulk write holds', () => {
  // About 700 pending pages (5.6 MB) of entries: past the embedded limit, well within PostgreSQL's.
  const ROWS = 50_000;
  const PAGES_IN_4_MB = (4 * 1024 * 1024) / 8192;
  let t: TestApp;

  /**
   * `count` rows of the upload benchmark's shape, 1,000 a batch, as RowsRepository.append takes them;
   * `beforeBatch(n)` is called as the write asks for batch n.
   */
  function* rowsOf(count: number, beforeBatch?: (n: number) => void): Generator<Array<[string, number, string]>> {
    for (let from = 0; from < count; from += 1000) {
      beforeBatch?.(from / 1000);
      yield Array.from({ length: Math.min(1000, count - from) }, (_, i): [string, number, string] => {
        const g = from + i;
        const doc = {
          id: g,
          question: `What is question number ${g}, please?`,
          answer: `Answer ${g} is ${(g * 7919) % 1000}`,
        };
        return [
          randomUUID(),
          g,
          JSON.stringify({ ...doc, language: 'en', difficulty: g % 10, score: ((g * 31) % 1000) / 10 }),
        ];
      });
    }
  }

  /** Appends `count` rows to a new dataset in a unit of work of their own, then merges the pending list: answers the pages merged. */
  const appendThenMerge = (count: number) =>
    t.app.get(TransactionRunner).run(async () => {
      await t.app.get(RowsRepository, { strict: false }).append(randomUUID(), 1, rowsOf(count));
      const [row] = await t.app
        .get(Db)
        .query<Array<{ merged: number }>>("SELECT gin_clean_pending_list('dataset_rows_data_idx')::int AS merged");
      return row.merged;
    });

  beforeAll(async () => {
    // No workers: their polls would wait for the embedded database's one connection behind these long writes.
    t = await startTestApp({ RUN_WORKERS: 'false' });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
  });

  it(`holds at most 4 MB on the embedded database and defers the merge on PostgreSQL (${ROWS} rows in one unit of work)`, async () => {
    const db = t.app.get(Db);
    // Insert and merge in one transaction: nothing else (autovacuum, the merge job) can merge the list between.
    const merged = await t.app.get(TransactionRunner).run(async () => {
      await db.query(
        `INSERT INTO dataset_rows (dataset_id, row_id, added_in, ordinal, data)
         SELECT $1, gen_random_uuid(), 1, g,
                jsonb_build_object('id', g, 'question', 'What is question number ' || g || ', please?',
                                   'answer', 'Answer ' || g || ' is ' || (g * 7919) % 1000,
                                   'language', (ARRAY['en','fr','de','es','it'])[g % 5 + 1],
                                   'difficulty', g % 10, 'score', ((g * 31) % 1000) / 10.0)
           FROM generate_series(1, $2::int) g`,
        [randomUUID(), ROWS],
      );
      const [row] = await db.query<Array<{ merged: number }>>(
        "SELECT gin_clean_pending_list('dataset_rows_data_idx')::int AS merged",
      );
      return row.merged;
    });
    const [{ reloptions }] = await db.query<Array<{ reloptions: string[] }>>(
      "SELECT reloptions FROM pg_class WHERE relname = 'dataset_rows_data_idx'",
    );
    if (onEmbedded) {
      // The inserts merged the list whenever it passed 4 MB: what is left is under it.
      expect(merged).toBeGreaterThan(0);
      expect(merged).toBeLessThanOrEqual(PAGES_IN_4_MB);
      expect(reloptions).toEqual(['fastupdate=on']);
    } else {
      // Everything the inserts added is still pending.
      expect(merged).toBeGreaterThan(PAGES_IN_4_MB);
      expect(reloptions).toEqual(['fastupdate=on', 'gin_pending_list_limit=131072']);
    }
  }, 120_000);

  itOn('embedded', 'PostgreSQL’s index keeps a 128-MB list, merged by the job on its own connection')(
    `leaves a bulk write’s first ${EMBEDDED_DEFERRED_GIN_ROWS} rows to the merge after it, and merges 4 MB at a time past them`,
    async () => {
      // 50,000 rows: about 700 pages pending at the end, all of them left for the merge.
      expect(await appendThenMerge(50_000)).toBeGreaterThan(PAGES_IN_4_MB);
      // Past the deferred rows the write merged whenever the list passed 4 MB: less than that is left. (Deferred
      // throughout, the 125,000 rows' 1,840 pages would stay under the first rows' own cap, 16 MB: all pending.)
      const merged = await appendThenMerge(EMBEDDED_DEFERRED_GIN_ROWS + 25_000);
      expect(merged).toBeGreaterThan(0);
      expect(merged).toBeLessThanOrEqual(PAGES_IN_4_MB);
    },
    180_000,
  );

  itOn('embedded', 'the engine runs on the event loop of the service only there')(
    'lets the event loop turn between the COPY statements of a bulk write',
    async () => {
      // 40 batches of 1,000 rows, about 7 MB encoded: COPY statements of 1 MB, each well past the turn budget.
      const BATCHES = 40;
      let turned = false;
      let batchWhenTurned: number | undefined;
      const batches = rowsOf(BATCHES * 1000, (n) => {
        if (turned && batchWhenTurned === undefined) batchWhenTurned = n;
      });
      const rows = t.app.get(RowsRepository, { strict: false });
      const written = await t.app.get(TransactionRunner).run(async () => {
        setImmediate(() => (turned = true));
        return rows.append(randomUUID(), 1, batches);
      });
      expect(written).toBe(BATCHES * 1000);
      // Without a turn between the statements the callback ran after the write had read every batch.
      expect(batchWhenTurned).toBeDefined();
      expect(batchWhenTurned!).toBeLessThan(BATCHES / 2);
    },
    120_000,
  );

  itOn('postgres', 'the embedded engine takes a COPY as separate statements, each short')(
    'keeps a COPY open past the pool’s read timeout while its source is still being read',
    async () => {
      const rows = t.app.get(RowsRepository, { strict: false });
      const written = await t.app.get(TransactionRunner).run(async () => {
        // The pool's read timeout, shortened for this transaction's connection to less than the source's pauses.
        const client = (
          t.app.get(Db).manager.queryRunner as unknown as {
            databaseConnection: { connectionParameters: { query_timeout?: number } };
          }
        ).databaseConnection;
        const before = client.connectionParameters.query_timeout;
        client.connectionParameters.query_timeout = 100;
        try {
          async function* slowly() {
            for (const batch of rowsOf(3000)) {
              await new Promise((resolve) => setTimeout(resolve, 250));
              yield batch;
            }
          }
          return await rows.append(randomUUID(), 1, slowly());
        } finally {
          client.connectionParameters.query_timeout = before;
        }
      });
      expect(written).toBe(3000);
    },
    60_000,
  );
});
