import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Db, TransactionRunner } from '#libs/database/unit-of-work.js';
import { DatasetWritesService } from '#src/modules/datasets/dataset-writes.service.js';
import type { NextVersion } from '#src/modules/datasets/dataset-writes.types.js';
import { DatasetsModule } from '#src/modules/datasets/datasets.module.js';
import { DatasetsService } from '#src/modules/datasets/datasets.service.js';
import { KeyedRowsService } from '#src/modules/datasets/keyed-rows.service.js';
import { LiveRepository } from '#src/modules/traces/live.repository.js';
import { spanRowId, TraceDatasets } from '#src/modules/traces/trace-datasets.service.js';
import { TracesModule } from '#src/modules/traces/traces.module.js';
import { domainError, startMedium, type Caller, type Medium } from './medium.js';

const NEXT: NextVersion = {
  leadingColumns: ['trace_id', 'span_id'],
  fields: { source: 'landed', message: 'test' },
  createdBy: null,
  mapping: {},
};

/**
 * DatasetWritesService's verbs over the real database (both): the datasets family owns a dataset's
 * version numbers and row ordinals. A reservation holds the next version against every other
 * writer; rows appended from another family's typed statement take their ordinals from the
 * dataset's counter in that same statement.
 */
describe('service tier: the datasets family numbers versions and ordinals for bulk writers', () => {
  let s: Medium;
  let c: Caller;
  let writes: DatasetWritesService;
  let transactions: TransactionRunner;

  beforeAll(async () => {
    s = await startMedium([TracesModule, DatasetsModule]);
    c = await s.caller();
    writes = s.get(DatasetWritesService);
    transactions = s.get(TransactionRunner);
  });
  afterAll(async () => {
    await s?.close();
  });

  const traceDataset = (name: string) =>
    transactions.run(async () => (await s.get(TraceDatasets).findOrCreate(c.workspaceId, name, null, 'test'))!);

  const counters = async (datasetId: string) =>
    (
      await s.query<{ latest_version: number; writing_version: number | null; next_ordinal: number }>(
        'SELECT latest_version, writing_version, next_ordinal::int AS next_ordinal FROM datasets WHERE id = $1',
        [datasetId],
      )
    )[0];

  const rows = (datasetId: string) =>
    s.query<{ span_id: string; ordinal: number; added_in: number }>(
      `SELECT data ->> 'span_id' AS span_id, ordinal::int AS ordinal, added_in FROM dataset_rows WHERE dataset_id = $1 ORDER BY ordinal`,
      [datasetId],
    );

  /** Acknowledged spans into the dataset's inbox, in this order (`span` or `trace/span`: trace t1 unless named). */
  const inbox = (datasetId: string, spans: string[]) =>
    transactions.run(() =>
      s.get(LiveRepository).enqueueSpans(
        datasetId,
        spans.map((named) => {
          const [trace, id] = named.includes('/') ? named.split('/') : ['t1', named];
          return { row_id: spanRowId(datasetId, trace, id), data: JSON.stringify({ trace_id: trace, span_id: id }) };
        }),
      ),
    );

  /** One batch from the inbox into version `number` (the next version when null), as live landing moves it. */
  async function fromInbox(datasetId: string, number: number | null) {
    const [head] = number
      ? await s.query<{ id: string }>('SELECT id FROM dataset_versions WHERE dataset_id = $1 AND number = $2', [
          datasetId,
          number,
        ])
      : [];
    return transactions.run(async () => {
      const dataset = (await writes.lock(datasetId))!;
      const into = head ? (await writes.version(head.id))! : NEXT;
      return writes.appendFrom(dataset, into, s.get(LiveRepository).inboxSource(datasetId, 100));
    });
  }

  it('holds a reserved version against every other writer until it is released, and gives the number back unmoved', async () => {
    const datasetId = await traceDataset('reserved');
    const reservation = await transactions.run(async () => writes.reserveNextVersion((await writes.lock(datasetId))!));
    expect(reservation).toEqual({ datasetId, number: 1, firstOrdinal: 0 });
    // A second writer is told to wait; live landing sees the reservation; nobody else makes version 1.
    expect(await transactions.run(async () => writes.reserveNextVersion((await writes.lock(datasetId))!))).toBeNull();
    expect(await transactions.run(() => writes.isReserved(datasetId))).toBe(true);
    await domainError(
      transactions.run(async () => {
        const locked = (await s.get(DatasetsService).findLocked(c.workspaceId, datasetId))!;
        return s.get(DatasetsService).createVersion(locked, 1, ['span_id'], { source: 'commit', message: '' }, null);
      }),
      'dataset_busy',
    );
    await transactions.run(() => writes.release(reservation!));
    expect(await counters(datasetId)).toEqual({ latest_version: 0, writing_version: null, next_ordinal: 0 });
    expect(await transactions.run(async () => writes.reserveNextVersion((await writes.lock(datasetId))!))).toEqual(
      reservation,
    );
  });

  it("appends another family's rows in its own statement, their ordinals from the dataset's counter, which moves past every row taken", async () => {
    const datasetId = await traceDataset('appended');
    expect(await inbox(datasetId, ['a', 'b'])).toBe(2);
    const first = await fromInbox(datasetId, null);
    expect(first).toEqual({ taken: 2, landed: 2, version: expect.objectContaining({ number: 1, rowCount: 2 }) });
    expect(await rows(datasetId)).toEqual([
      { span_id: 'a', ordinal: 0, added_in: 1 },
      { span_id: 'b', ordinal: 1, added_in: 1 },
    ]);
    expect(await counters(datasetId)).toEqual({ latest_version: 1, writing_version: null, next_ordinal: 2 });

    // `a` again (taken, not written: the version shows it), then `c`: its ordinal is its place after the counter.
    await inbox(datasetId, ['a', 'c']);
    expect(await fromInbox(datasetId, 1)).toEqual({
      taken: 2,
      landed: 1,
      version: expect.objectContaining({ number: 1 }),
    });
    expect((await rows(datasetId)).map((r) => [r.span_id, r.ordinal, r.added_in])).toEqual([
      ['a', 0, 1],
      ['b', 1, 1],
      ['c', 3, 1],
    ]);
    expect(await counters(datasetId)).toEqual({ latest_version: 1, writing_version: null, next_ordinal: 4 });
    expect(await s.query('SELECT 1 FROM trace_inbox WHERE dataset_id = $1', [datasetId])).toEqual([]);

    // An empty inbox takes nothing and moves nothing.
    expect(await fromInbox(datasetId, null)).toEqual({ taken: 0, landed: 0, version: null });
    expect(await counters(datasetId)).toEqual({ latest_version: 1, writing_version: null, next_ordinal: 4 });
  });

  it('reads a version by key: grouped by trace in keyset pages, through the partial trace index; counts and finds its values', async () => {
    const datasetId = await traceDataset('keyed');
    await inbox(datasetId, ['t2/c', 't1/a', 't1/b']);
    await fromInbox(datasetId, null);
    const keyed = s.get(KeyedRowsService);
    const pages: unknown[][] = [];
    for await (const page of keyed.byKey(datasetId, 1, 'trace_id', ['span_id'], 1))
      pages.push(page.map((span) => span.span_id));
    expect(pages).toEqual([['a'], ['b'], ['c']]);
    expect(await s.get(TraceDatasets).countTraces(datasetId, 1)).toBe(2);
    expect(await s.get(TraceDatasets).knownTraces(datasetId, 1, ['t1', 't9'])).toEqual(new Set(['t1']));
    await expect(keyed.countDistinct(datasetId, 1, "trace_id') OR ('")).rejects.toThrow('not a plain key');

    // What lands, read by trace id (online evaluation's spans of the traces it scores).
    const traces = s.get(TraceDatasets);
    expect((await traces.currentSpans(datasetId, 'trace_id', ['t1'])).map((span) => span.span_id)).toEqual(['a', 'b']);

    // The statements a trace's spans are read with name the index's literals, so the planner may use it: the trace
    // index, or for lookups by trace id the span tree's, which leads with the same (dataset, trace) key.
    const byTrace = /dataset_rows_(trace|span_parent)_idx/;
    expect(await planOf(() => drain(traces.spansByTrace(datasetId, 1)))).toContain('dataset_rows_trace_idx');
    expect(await planOf(() => traces.knownTraces(datasetId, 1, ['t1', 't9']))).toMatch(byTrace);
    expect(await planOf(() => traces.currentSpans(datasetId, 'trace_id', ['t1', 't2']))).toMatch(byTrace);
  });

  async function drain(pages: AsyncGenerator<unknown[]>): Promise<void> {
    for await (const page of pages) expect(page.length).toBeGreaterThan(0);
  }

  /**
   * The plan of the first statement `read` sends, planned once for any parameters (a prepared
   * statement's generic plan, as a pool reuses it): only literals prove a partial index's predicate.
   */
  async function planOf(read: () => Promise<unknown>): Promise<string> {
    const db = s.get(Db);
    const query = db.query.bind(db);
    const seen: Array<{ sql: string; params: unknown[] }> = [];
    const spy = jest.spyOn(db, 'query').mockImplementation((sql: string, params?: unknown[]) => {
      seen.push({ sql, params: params ?? [] });
      return query(sql, params);
    });
    try {
      await read();
    } finally {
      spy.mockRestore();
    }
    const { sql, params } = seen[0];
    const literal = (v: unknown): string =>
      typeof v === 'number'
        ? String(v)
        : Array.isArray(v)
          ? `ARRAY[${v.map(literal).join(', ')}]::text[]`
          : `'${String(v)}'`;
    const plan = await transactions.run(async () => {
      await db.query('SET LOCAL enable_seqscan = off');
      await db.query('SET LOCAL plan_cache_mode = force_generic_plan');
      await db.query(`PREPARE read_by_key AS ${sql}`);
      const explained = await db.query<Array<Record<string, string>>>(
        `EXPLAIN EXECUTE read_by_key(${params.map(literal).join(', ')})`,
      );
      await db.query('DEALLOCATE read_by_key');
      return explained;
    });
    return plan.map((line) => Object.values(line)[0]).join('\n');
  }
});
