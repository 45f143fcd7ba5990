import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import type { JobOf } from '#libs/queue/job.types.js';
import type { TRACE_LAND_JOB } from '#src/modules/traces/traces.jobs.js';
import { TrackedRecords } from '#libs/queue/tracked-records.service.js';
import { Db, TransactionRunner } from '#libs/database/unit-of-work.js';
import { DatasetWritesService } from '#src/modules/datasets/dataset-writes.service.js';
import { DatasetsService } from '#src/modules/datasets/datasets.service.js';
import { RowsRepository } from '#src/modules/datasets/rows/rows.repository.js';
import { TraceRetentionService } from '#src/modules/traces/retention.service.js';
import { spanRowId } from '#src/modules/traces/trace-datasets.service.js';
import { FRESH_IDS_MAX, LAND_BATCH, TraceLanding } from '#src/modules/traces/trace-landing.job.js';
import { TRACE_INGEST_RUNS } from '#src/modules/traces/traces.repository.js';
import { TracesService } from '#src/modules/traces/traces.service.js';
import { domainError, startMedium, type Caller, type Medium } from './medium.js';
import { DatasetsModule } from '#src/modules/datasets/datasets.module.js';
import { TracesModule } from '#src/modules/traces/traces.module.js';

const DAY_MS = 24 * 3600_000;

/** A span record in the canonical shape (one of the conventions landing detects), started `daysAgo` days ago. */
function span(trace: string, id: string, daysAgo = 0, parent: string | null = null): Record<string, unknown> {
  const start = Date.now() - daysAgo * DAY_MS;
  return {
    trace_id: trace,
    span_id: id,
    parent_span_id: parent,
    name: `step ${id}`,
    start_time: new Date(start).toISOString(),
    end_time: new Date(start + 1500).toISOString(),
    input: `in ${id}`,
    output: `out ${id}`,
  };
}

/**
 * TraceLanding, DatasetWritesService and the retention sweep called directly over the real
 * database: the version a landing writes and its counts, landing the same spans again, a landing
 * that crashes after writing (its number stays reserved, the retry writes nothing twice) or fails
 * for good (its rows removed, the number released), and retention's bounded deletes.
 */
describe('service tier: trace landing and retention', () => {
  let s: Medium;
  let c: Caller;
  let landing: TraceLanding;

  beforeAll(async () => {
    s = await startMedium([TracesModule, DatasetsModule]);
    c = await s.caller();
    landing = s.get(TraceLanding);
  });
  afterAll(async () => {
    await s?.close();
  });

  /** Starts a landing of inline records (its job stays queued) and runs one attempt of it, as the queue would. */
  async function land(records: unknown[], target: { dataset_id?: string; dataset_name?: string }) {
    const run = await s
      .get(TracesService)
      .landInline(c.access, { workspace_id: c.workspaceId, records, ...target }, c.principal);
    return { runId: run.id, attempt: () => attempt(run.id) };
  }

  async function attempt(runId: string) {
    await s.get(TrackedRecords).start(TRACE_INGEST_RUNS, runId);
    return landing.land({
      job: {} as JobOf<typeof TRACE_LAND_JOB>,
      payload: { ingest_run_id: runId },
      signal: new AbortController().signal,
      progress: async () => undefined,
    });
  }

  const ingestRun = async (runId: string) =>
    (
      await s.query<Record<string, unknown>>(
        `SELECT state, version_number, version_id, received, landed, deduplicated, dropped, drop_reasons, traces, failure
           FROM trace_ingest_runs WHERE id = $1`,
        [runId],
      )
    )[0];

  const datasetOf = async (runId: string) =>
    (await s.query<{ id: string }>('SELECT dataset_id AS id FROM trace_ingest_runs WHERE id = $1', [runId]))[0].id;

  const dataset = async (datasetId: string) =>
    (
      await s.query<{ latest_version: number; writing_version: number | null; next_ordinal: number }>(
        'SELECT latest_version, writing_version, next_ordinal::int AS next_ordinal FROM datasets WHERE id = $1',
        [datasetId],
      )
    )[0];

  const versions = (datasetId: string) =>
    s.query<{ number: number; row_count: number; content_sha256: string; source: string }>(
      'SELECT number, row_count, content_sha256, source FROM dataset_versions WHERE dataset_id = $1 ORDER BY number',
      [datasetId],
    );

  /** Span ids a version shows, in row order, and the content hash of those rows (docs/datasets.md). */
  async function shown(datasetId: string, number: number) {
    const rows = await s.query<{ row_id: string; span_id: string; line: string }>(
      `SELECT row_id::text AS row_id, data ->> 'span_id' AS span_id, row_id::text || ' ' || data::text AS line
         FROM dataset_rows WHERE dataset_id = $1 AND added_in <= $2 AND (removed_in IS NULL OR removed_in > $2) ORDER BY ordinal`,
      [datasetId, number],
    );
    return {
      spans: rows.map((r) => r.span_id),
      rowIds: rows.map((r) => r.row_id),
      sha256: createHash('sha256')
        .update(rows.map((r) => r.line).join('\n'))
        .digest('hex'),
    };
  }

  const addedIn = async (datasetId: string, number: number) =>
    (
      await s.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM dataset_rows WHERE dataset_id = $1 AND added_in = $2',
        [datasetId, number],
      )
    )[0].n;

  it('lands spans as the next version, with derived row ids, its counts and its hash; drops what it cannot read', async () => {
    const records = [span('t1', 'a'), span('t1', 'b', 0, 'a'), span('t2', 'c'), { hello: 'world' }];
    const { runId, attempt: go } = await land(records, { dataset_name: 'landed-1' });
    const result = await go();
    const run = await ingestRun(runId);
    expect(result).toEqual({ landed: 3, dropped: 1, version_id: run.version_id });
    expect(run).toEqual(
      expect.objectContaining({
        state: 'succeeded',
        version_number: 1,
        received: 4,
        landed: 3,
        deduplicated: 0,
        dropped: 1,
        drop_reasons: { unsupported_record: 1 },
        traces: 2,
        failure: null,
      }),
    );
    const datasetId = await datasetOf(runId);
    const v1 = await shown(datasetId, 1);
    expect(v1.spans).toEqual(['a', 'b', 'c']);
    expect(v1.rowIds).toEqual([
      spanRowId(datasetId, 't1', 'a'),
      spanRowId(datasetId, 't1', 'b'),
      spanRowId(datasetId, 't2', 'c'),
    ]);
    expect(await versions(datasetId)).toEqual([
      { number: 1, row_count: 3, content_sha256: v1.sha256, source: 'landed' },
    ]);
    expect(await dataset(datasetId)).toEqual({
      latest_version: 1,
      writing_version: null,
      next_ordinal: expect.any(Number),
    });
  });

  it('hashes a first landing as its rows stream: the version hash is that of the rows as stored, whatever their text', async () => {
    const odd = {
      ...span('t1', 'a'),
      attributes: {
        ключ: 'é 😀 \u2028',
        big: 1e21,
        small: 1.5e-7,
        list: [1, { b: 2, a: 1 }, null, 'q"uote\\'],
        nested: { z: true, aa: { '': 0 } },
      },
    };
    const { runId, attempt: go } = await land([odd, span('t1', 'b', 0, 'a')], { dataset_name: 'landed-text' });
    expect((await go()).landed).toBe(2);
    const datasetId = await datasetOf(runId);
    const [version] = await versions(datasetId);
    expect(version).toEqual(expect.objectContaining({ number: 1, row_count: 2 }));
    expect(version.content_sha256).toBe((await shown(datasetId, 1)).sha256);
  });

  it('lands the same spans again without writing them twice; only new spans make a version', async () => {
    const first = [span('t1', 'a'), span('t1', 'b', 0, 'a')];
    const one = await land(first, { dataset_name: 'landed-2' });
    await one.attempt();
    const datasetId = await datasetOf(one.runId);

    const again = await land(first, { dataset_id: datasetId });
    expect(await again.attempt()).toEqual({ landed: 0, dropped: 0, version_id: null });
    expect(await ingestRun(again.runId)).toEqual(
      expect.objectContaining({ state: 'succeeded', received: 2, landed: 0, deduplicated: 2, version_id: null }),
    );
    // Nothing new: no version, and the reserved number was given back.
    expect(await dataset(datasetId)).toEqual(expect.objectContaining({ latest_version: 1, writing_version: null }));
    expect(await addedIn(datasetId, 2)).toBe(0);

    const grown = await land([...first, span('t3', 'd')], { dataset_id: datasetId });
    const result = await grown.attempt();
    expect(result.landed).toBe(1);
    expect(await ingestRun(grown.runId)).toEqual(
      expect.objectContaining({ received: 3, landed: 1, deduplicated: 2, version_number: 2 }),
    );
    // The new version shows what the dataset held and the new span.
    const v2 = await shown(datasetId, 2);
    expect(v2.spans).toEqual(['a', 'b', 'd']);
    expect((await versions(datasetId)).map((v) => [v.number, v.row_count, v.content_sha256])).toEqual([
      [1, 2, (await shown(datasetId, 1)).sha256],
      [2, 3, v2.sha256],
    ]);
  });

  /** Records each batch a landing writes: by which path, how many spans, in which transaction (a manager is one transaction's). */
  function watchBatches() {
    const writes = s.get(DatasetWritesService);
    const db = s.get(Db);
    const batches: Array<{ path: 'fresh' | 'staged'; spans: number; transaction: unknown }> = [];
    const write = writes.appendReserved.bind(writes);
    const spy = jest.spyOn(writes, 'appendReserved').mockImplementation(async (reservation, rows, how) => {
      const path = how.known ? 'fresh' : 'staged';
      batches.push({ path, spans: rows.length, transaction: db.inTransaction ? db.manager : null });
      return write(reservation, rows, how);
    });
    return { batches, stop: () => spy.mockRestore() };
  }

  it('writes a first landing straight into its version, a span repeated in the file once, and hashes it on the way', async () => {
    const records = [
      span('t1', 'a'),
      span('t1', 'b', 0, 'a'),
      span('t1', 'a'),
      span('t2', 'c'),
      span('t1', 'b', 0, 'a'),
    ];
    const { runId } = await land(records, { dataset_name: 'landed-fresh' });
    const contentHash = jest.spyOn(s.get(RowsRepository), 'contentHash');
    const { batches, stop } = watchBatches();
    try {
      expect((await attempt(runId)).landed).toBe(3);
    } finally {
      stop();
    }
    expect(batches.map((b) => [b.path, b.spans])).toEqual([['fresh', 3]]);
    // Every span it wrote was hashed as it went: the hash is not read back from the rows.
    expect(contentHash).not.toHaveBeenCalled();
    contentHash.mockRestore();
    expect(await ingestRun(runId)).toEqual(
      expect.objectContaining({ state: 'succeeded', received: 5, landed: 3, deduplicated: 2, traces: 2 }),
    );
    // The conventions count every normalised span, the repeated ones too.
    const [{ conventions }] = await s.query<{ conventions: Record<string, number> }>(
      'SELECT conventions FROM trace_ingest_runs WHERE id = $1',
      [runId],
    );
    expect(Object.values(conventions).reduce((a, b) => a + b, 0)).toBe(5);
    const datasetId = await datasetOf(runId);
    const v1 = await shown(datasetId, 1);
    expect(v1.spans).toEqual(['a', 'b', 'c']);
    expect(await versions(datasetId)).toEqual([
      { number: 1, row_count: 3, content_sha256: v1.sha256, source: 'landed' },
    ]);
  });

  it('takes the staged path for the rest of a first landing past the span ids it may keep, and still writes each span once', async () => {
    const limited = landing as unknown as { freshIdsMax: number };
    limited.freshIdsMax = 3;
    // `a` and `b` come again after the switch: the staged path finds them written.
    const records = ['a', 'b', 'c', 'd', 'a', 'e', 'b'].map((id) => span('t1', id));
    const { runId } = await land(records, { dataset_name: 'landed-switch' });
    const { batches, stop } = watchBatches();
    try {
      expect((await attempt(runId)).landed).toBe(5);
    } finally {
      stop();
      limited.freshIdsMax = FRESH_IDS_MAX;
    }
    expect(batches.map((b) => [b.path, b.spans])).toEqual([
      ['fresh', 3],
      ['staged', 4],
    ]);
    expect(await ingestRun(runId)).toEqual(
      expect.objectContaining({ state: 'succeeded', received: 7, landed: 5, deduplicated: 2 }),
    );
    const datasetId = await datasetOf(runId);
    const v1 = await shown(datasetId, 1);
    expect(v1.spans).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(await versions(datasetId)).toEqual([
      { number: 1, row_count: 5, content_sha256: v1.sha256, source: 'landed' },
    ]);
  });

  it('writes a large landing in bounded batches of LAND_BATCH spans, each in its own transaction', async () => {
    const total = 2 * LAND_BATCH + 1;
    const records = Array.from({ length: total }, (_, i) => span(`t${i % 50}`, `s${i}`));
    const { runId } = await land(records, { dataset_name: 'landed-large' });
    const { batches, stop } = watchBatches();
    try {
      expect((await attempt(runId)).landed).toBe(total);
    } finally {
      stop();
    }
    // A first landing into an empty dataset: every batch COPYed straight into the version.
    expect(batches.map((b) => [b.path, b.spans])).toEqual([
      ['fresh', LAND_BATCH],
      ['fresh', LAND_BATCH],
      ['fresh', 1],
    ]);
    const transactions = batches.map((b) => b.transaction);
    expect(transactions).not.toContain(null);
    expect(new Set(transactions).size).toBe(3);
    const datasetId = await datasetOf(runId);
    expect(await ingestRun(runId)).toEqual(expect.objectContaining({ received: total, landed: total, traces: 50 }));
    expect((await versions(datasetId)).map((v) => [v.number, v.row_count])).toEqual([[1, total]]);
  });

  it('keeps its number reserved when it crashes after writing: nobody makes that version, the retry writes nothing twice', async () => {
    const records = [span('t1', 'a'), span('t1', 'b'), span('t2', 'c')];
    const { runId } = await land(records, { dataset_name: 'landed-3' });
    const finish = jest.spyOn(landing as unknown as { finish: () => Promise<unknown> }, 'finish');
    finish.mockRejectedValueOnce(new Error('test: the worker died'));
    await expect(attempt(runId)).rejects.toThrow('test: the worker died');
    finish.mockRestore();

    const run = await ingestRun(runId);
    const datasetId = await datasetOf(runId);
    expect(run).toEqual(expect.objectContaining({ state: 'running', version_number: 1, version_id: null }));
    // The spans are written under the reserved number, which no version record names yet.
    expect(await addedIn(datasetId, 1)).toBe(3);
    expect(await versions(datasetId)).toEqual([]);
    expect(await dataset(datasetId)).toEqual(expect.objectContaining({ latest_version: 0, writing_version: 1 }));
    // Nobody else may make version 1 meanwhile.
    const datasets = s.get(DatasetsService);
    await domainError(
      s.get(TransactionRunner).run(async () => {
        const locked = (await datasets.findLocked(c.workspaceId, datasetId))!;
        return datasets.createVersion(locked, 1, ['span_id'], { source: 'commit', message: '' }, c.principal.userId);
      }),
      'dataset_busy',
    );

    // The retry goes on under the same number and finds every span already written.
    expect(await attempt(runId)).toEqual({ landed: 3, dropped: 0, version_id: expect.any(String) });
    expect(await addedIn(datasetId, 1)).toBe(3);
    expect(await ingestRun(runId)).toEqual(
      expect.objectContaining({ state: 'succeeded', version_number: 1, received: 3, landed: 3, deduplicated: 0 }),
    );
    expect((await versions(datasetId)).map((v) => [v.number, v.row_count, v.content_sha256])).toEqual([
      [1, 3, (await shown(datasetId, 1)).sha256],
    ]);
    expect(await dataset(datasetId)).toEqual(expect.objectContaining({ latest_version: 1, writing_version: null }));
  });

  it('removes what a landing that failed for good wrote and gives its number back', async () => {
    const base = await land([span('t0', 'z')], { dataset_name: 'landed-4' });
    await base.attempt();
    const datasetId = await datasetOf(base.runId);
    const { runId } = await land([span('t1', 'a'), span('t1', 'b')], { dataset_id: datasetId });
    const finish = jest.spyOn(landing as unknown as { finish: () => Promise<unknown> }, 'finish');
    finish.mockRejectedValueOnce(new Error('test: gives up'));
    await expect(attempt(runId)).rejects.toThrow('test: gives up');
    finish.mockRestore();
    expect(await addedIn(datasetId, 2)).toBe(2);
    expect(await dataset(datasetId)).toEqual(expect.objectContaining({ writing_version: 2 }));

    // The queue ends the record and calls the settled hook in one transaction.
    await s.get(TransactionRunner).run(async () => {
      await s
        .get(TrackedRecords)
        .fail(TRACE_INGEST_RUNS, runId, { code: 'failed', message: 'test: gives up' }, 'failed');
      await landing.onSettled({ status: 'failed', payload: { ingest_run_id: runId } } as JobOf<typeof TRACE_LAND_JOB>);
    });
    expect(await addedIn(datasetId, 2)).toBe(0);
    expect(await dataset(datasetId)).toEqual(expect.objectContaining({ latest_version: 1, writing_version: null }));
    expect((await versions(datasetId)).map((v) => [v.number, v.row_count])).toEqual([[1, 1]]);
    // The next landing takes number 2.
    const next = await land([span('t1', 'a')], { dataset_id: datasetId });
    await next.attempt();
    expect(await ingestRun(next.runId)).toEqual(
      expect.objectContaining({ state: 'succeeded', version_number: 2, landed: 1 }),
    );
  });

  it('deletes spans past retention a bounded batch at a time; row counts, then hashes, follow', async () => {
    const records = [
      span('old', 'o1', 40),
      span('old', 'o2', 40),
      span('old', 'o3', 35),
      span('new', 'n1', 1),
      span('new', 'n2', 0),
    ];
    const first = await land(records.slice(0, 3), { dataset_name: 'retained' });
    await first.attempt();
    const datasetId = await datasetOf(first.runId);
    await (await land(records, { dataset_id: datasetId })).attempt();
    expect((await versions(datasetId)).map((v) => [v.number, v.row_count])).toEqual([
      [1, 3],
      [2, 5],
    ]);

    // One bounded batch of two: the versions that lost rows are named, their row counts follow at once.
    const writes = s.get(DatasetWritesService);
    const batch = await s.get(TransactionRunner).run(async () => {
      await s.get(DatasetsService).findLocked(c.workspaceId, datasetId);
      return writes.deleteBefore(datasetId, 'start_time', new Date(Date.now() - 30 * DAY_MS), 2);
    });
    expect(batch.deleted).toBe(2);
    expect([...batch.versions].sort()).toEqual([1, 2]);
    expect((await versions(datasetId)).map((v) => [v.number, v.row_count])).toEqual([
      [1, 1],
      [2, 3],
    ]);

    // The sweep removes the rest past 30 days and recomputes the hashes of the versions it touched.
    const retention = s.get(TraceRetentionService);
    await retention.putDataset(c.access, datasetId, 30, c.principal);
    const swept = await retention.sweepNow(c.access);
    expect(swept.datasets).toEqual([
      expect.objectContaining({ dataset_id: datasetId, retention_days: 30, spans_deleted: 1, versions_updated: 2 }),
    ]);
    const [v1, v2] = [await shown(datasetId, 1), await shown(datasetId, 2)];
    expect(v1.spans).toEqual([]);
    expect(v2.spans).toEqual(['n1', 'n2']);
    expect((await versions(datasetId)).map((v) => [v.number, v.row_count, v.content_sha256])).toEqual([
      [1, 0, v1.sha256],
      [2, 2, v2.sha256],
    ]);
    // A second sweep finds nothing.
    expect((await retention.sweepNow(c.access)).datasets).toEqual([]);
  });
});
