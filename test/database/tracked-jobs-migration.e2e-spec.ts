import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { TrackedJobs1765500000000 } from '#src/database/migrations/1765500000000-tracked-jobs.js';
import { migrationsUpTo, openScratchDatabase, type ScratchDatabase } from '../utils/scratch-database.js';

/**
 * The tracked-jobs migration (docs/architecture.md#background-work) on a database holding
 * records of the shapes before it: they are carried over to the tracked columns, and back by
 * its `down`: on a scratch PostgreSQL database, or an embedded one in a scratch directory.
 */
describe('the tracked-jobs migration', () => {
  let scratch: ScratchDatabase;
  let db: DataSource;
  const ids: Record<string, string> = {};

  const one = async <T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T> =>
    ((await db.query(sql, params)) as T[])[0];

  beforeAll(async () => {
    scratch = await openScratchDatabase('tracked', migrationsUpTo(TrackedJobs1765500000000));
    db = scratch.dataSource;
    await db.runMigrations({ transaction: 'each' });
    await db.undoLastMigration({ transaction: 'each' });

    // Records as the tables held them before the migration.
    ids.ws = (await one<{ id: string }>(`INSERT INTO workspaces (name) VALUES ('w') RETURNING id`)).id;
    ids.ds = (
      await one<{ id: string }>(`INSERT INTO datasets (workspace_id, name) VALUES ($1, 'd') RETURNING id`, [ids.ws])
    ).id;
    ids.v = (
      await one<{ id: string }>(
        `INSERT INTO dataset_versions (dataset_id, workspace_id, number, source) VALUES ($1, $2, 1, 'upload') RETURNING id`,
        [ids.ds, ids.ws],
      )
    ).id;
    const versionOf = [ids.ws, ids.ds, ids.v];
    ids.analysis = (
      await one<{ id: string }>(
        `INSERT INTO analysis_runs (workspace_id, dataset_id, version_id, state, state_reason, params, kinds) VALUES ($1, $2, $3, 'failed', 'column gone', '{}', '{text}') RETURNING id`,
        versionOf,
      )
    ).id;
    ids.cluster = (
      await one<{ id: string }>(
        `INSERT INTO cluster_runs (workspace_id, dataset_id, version_id, state, params) VALUES ($1, $2, $3, 'running', '{}') RETURNING id`,
        versionOf,
      )
    ).id;
    ids.enrichment = (
      await one<{ id: string }>(
        `INSERT INTO trace_enrichment_runs (workspace_id, dataset_id, version_id, state, trigger, traces_total, traces_done, error) VALUES ($1, $2, $3, 'cancelled', 'landing', 40, 12, '{"code": "cancelled", "message": "cancelled while queued"}') RETURNING id`,
        versionOf,
      )
    ).id;
    ids.quality = (
      await one<{ id: string }>(
        `INSERT INTO data_operation_runs (workspace_id, dataset_id, version_id, kind, state, error) VALUES ($1, $2, $3, 'quality_checks', 'failed', 'out of memory') RETURNING id`,
        versionOf,
      )
    ).id;
    ids.op = (
      await one<{ id: string }>(
        `INSERT INTO custom_ops (workspace_id, name, state, revision, endpoint_url, health_url, timeout_ms) VALUES ($1, 'op', 'deploying', 4, 'http://x', '', 1000) RETURNING id`,
        [ids.ws],
      )
    ).id;
    const revision = async (n: number, outcome: string, reason: string | null, checked: boolean) =>
      (
        await one<{ id: string }>(
          `INSERT INTO custom_op_revisions (workspace_id, custom_op_id, revision, endpoint_url, health_url, timeout_ms, outcome, reason, checked_at) VALUES ($1, $2, $3, 'http://x', '', 1000, $4, $5, ${checked ? 'now()' : 'NULL'}) RETURNING id`,
          [ids.ws, ids.op, n, outcome, reason],
        )
      ).id;
    ids.r1 = await revision(1, 'superseded', null, true);
    ids.r2 = await revision(2, 'superseded', null, false);
    ids.r3 = await revision(3, 'failed', 'answered 500', true);
    ids.r4 = await revision(4, 'deploying', null, false);
    ids.job = (
      await one<{ id: string }>(`INSERT INTO jobs (type, payload) VALUES ('ops.custom-op-deploy', $1) RETURNING id`, [
        JSON.stringify({ custom_op_id: ids.op, revision: 4 }),
      ])
    ).id;
    await db.runMigrations({ transaction: 'each' });
  });

  afterAll(async () => {
    await scratch?.close();
  });

  it('carries texts and objects over to one failure shape, and counts over to progress', async () => {
    expect(await one('SELECT state, failure FROM analysis_runs WHERE id = $1', [ids.analysis])).toEqual({
      state: 'failed',
      failure: { code: 'failed', message: 'column gone' },
    });
    expect(await one('SELECT state, failure FROM cluster_runs WHERE id = $1', [ids.cluster])).toEqual({
      state: 'running',
      failure: null,
    });
    expect(
      await one('SELECT state, failure, progress FROM trace_enrichment_runs WHERE id = $1', [ids.enrichment]),
    ).toEqual({
      state: 'cancelled',
      failure: { code: 'cancelled', message: 'cancelled while queued' },
      progress: { done: 12, total: 40 },
    });
    expect(
      await one('SELECT state, failure, started_at IS NOT NULL AS started FROM data_operation_runs WHERE id = $1', [
        ids.quality,
      ]),
    ).toEqual({ state: 'failed', failure: { code: 'failed', message: 'out of memory' }, started: true });
  });

  it('turns revision outcomes into check states, superseded kept apart; the queued check names its revision', async () => {
    const rows: Array<{ id: string; state: string; failure: unknown; superseded: boolean; job_id: string | null }> =
      await db.query(
        'SELECT id, state, failure, superseded_at IS NOT NULL AS superseded, job_id FROM custom_op_revisions ORDER BY revision',
      );
    expect(rows.map(({ id: _id, ...r }) => r)).toEqual([
      { state: 'succeeded', failure: null, superseded: true, job_id: null },
      {
        state: 'cancelled',
        failure: { code: 'not_checked', message: 'replaced before its health check ran' },
        superseded: true,
        job_id: null,
      },
      { state: 'failed', failure: { code: 'unhealthy', message: 'answered 500' }, superseded: false, job_id: null },
      { state: 'queued', failure: null, superseded: false, job_id: ids.job },
    ]);
    expect(
      (await one<{ payload: Record<string, unknown> }>('SELECT payload FROM jobs WHERE id = $1', [ids.job])).payload,
    ).toEqual({ custom_op_id: ids.op, revision: 4, revision_id: ids.r4 });
  });

  it('refuses a state outside the vocabulary and a failure without code and message', async () => {
    await expect(db.query(`UPDATE analysis_runs SET state = 'done' WHERE id = $1`, [ids.analysis])).rejects.toThrow(
      /analysis_runs_state_check/,
    );
    await expect(
      db.query(`UPDATE analysis_runs SET failure = '{"message": "x"}' WHERE id = $1`, [ids.analysis]),
    ).rejects.toThrow(/analysis_runs_failure_check/);
  });

  it('goes back: the texts, the error objects, the counts and the outcomes return', async () => {
    await db.undoLastMigration({ transaction: 'each' });
    expect(await one('SELECT state, state_reason FROM analysis_runs WHERE id = $1', [ids.analysis])).toEqual({
      state: 'failed',
      state_reason: 'column gone',
    });
    expect(
      await one('SELECT state, error, traces_total, traces_done FROM trace_enrichment_runs WHERE id = $1', [
        ids.enrichment,
      ]),
    ).toEqual({
      state: 'cancelled',
      error: { code: 'cancelled', message: 'cancelled while queued' },
      traces_total: 40,
      traces_done: 12,
    });
    expect(await one('SELECT state, error FROM data_operation_runs WHERE id = $1', [ids.quality])).toEqual({
      state: 'failed',
      error: 'out of memory',
    });
    const outcomes: Array<{ outcome: string; reason: string | null }> = await db.query(
      'SELECT outcome, reason FROM custom_op_revisions ORDER BY revision',
    );
    expect(outcomes).toEqual([
      { outcome: 'superseded', reason: null },
      { outcome: 'superseded', reason: 'replaced before its health check ran' },
      { outcome: 'failed', reason: 'answered 500' },
      { outcome: 'deploying', reason: null },
    ]);
  });
});
