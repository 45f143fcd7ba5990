import { Injectable } from '@nestjs/common';
import { sql, type Insertable, type Selectable, type SqlBool, type Updateable } from 'kysely';
import { DummyValue, GenerateSql } from '#libs/database/generate-sql.js';
import type { JsonObject, OnlineBackfills, OnlineEvaluators, OnlineTargets } from '#libs/database/schema.js';
import { countN, countOf, withTotal, type PageWindow } from '#libs/database/typed-fragments.js';
import type { QueryBuilder } from '#libs/database/typed-queries.js';
import { Db } from '#libs/database/unit-of-work.js';
import { trackedRecord } from '#libs/queue/tracked-job.js';

export type EvaluatorRow = Selectable<OnlineEvaluators>;
export type TargetRow = Selectable<OnlineTargets>;
export type BackfillRow = Selectable<OnlineBackfills>;
export type NewTarget = Insertable<OnlineTargets> & {
  evaluator_id: string;
  evaluator_version: number;
  target_key: string;
};

export const ONLINE_BACKFILLS = trackedRecord('online_backfills', 'backfill_id');

/** Targets per state of one evaluator version. */
export type TargetCounts = Record<'pending' | 'scored' | 'skipped' | 'failed', number>;

/** Evaluators, their versions, the ledger of targets they took and their backfills (the online family's tables). */
@Injectable()
export class OnlineRepository {
  constructor(private readonly db: Db) {}

  // Evaluators

  async insertEvaluator(row: Insertable<OnlineEvaluators>): Promise<EvaluatorRow> {
    const [created] = await this.db.typed((q) => q.insertInto('online_evaluators').values(row).returningAll());
    return created;
  }

  async find(workspaceId: string, id: string): Promise<EvaluatorRow | null> {
    const [row] = await this.db.typed((q) =>
      q.selectFrom('online_evaluators').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id),
    );
    return row ?? null;
  }

  /** The workspace's evaluator locked for the caller's unit of work. */
  async lockScoped(workspaceId: string, id: string): Promise<EvaluatorRow | null> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('online_evaluators')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .forUpdate(),
    );
    return row ?? null;
  }

  /** The evaluator locked for the caller's unit of work (a job resolving its own record). */
  async lockUnscoped(id: string): Promise<EvaluatorRow | null> {
    const [row] = await this.db.typed((q) =>
      q.selectFrom('online_evaluators').selectAll().where('id', '=', id).forUpdate(),
    );
    return row ?? null;
  }

  async findUnscoped(id: string): Promise<EvaluatorRow | null> {
    const [row] = await this.db.typed((q) => q.selectFrom('online_evaluators').selectAll().where('id', '=', id));
    return row ?? null;
  }

  async nameTaken(workspaceId: string, name: string, except?: string): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('online_evaluators')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
        .$if(except !== undefined, (s) => s.where('id', '!=', except!)),
    );
    return rows.length > 0;
  }

  async page(
    workspaceId: string,
    filter: { datasetId?: string; state?: string },
    window: PageWindow,
  ): Promise<{ rows: EvaluatorRow[]; total: number }> {
    const matching = (q: QueryBuilder) =>
      q
        .selectFrom('online_evaluators')
        .where('workspace_id', '=', workspaceId)
        .$if(filter.datasetId !== undefined, (s) => s.where('dataset_id', '=', filter.datasetId!))
        .$if(filter.state !== undefined, (s) => s.where('state', '=', filter.state!));
    const rows = await this.db.typed((q) =>
      matching(q)
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(window.take)
        .offset(window.skip),
    );
    const [, total] = await withTotal(rows, window, () => countOf(this.db, matching));
    return { rows, total };
  }

  async update(id: string, patch: Updateable<OnlineEvaluators>): Promise<EvaluatorRow> {
    const [row] = await this.db.typed((q) =>
      q
        .updateTable('online_evaluators')
        .set({ ...patch, updated_at: sql<Date>`now()` })
        .where('id', '=', id)
        .returningAll(),
    );
    return row;
  }

  /** Which job follows the evaluator, from when, and whether spans landed while it ran (not an edit: updated_at stays). */
  async setFollow(
    id: string,
    follow: { follow_job_id: string | null; follow_run_after: Date | null; follow_again: boolean },
  ): Promise<void> {
    await this.db.typedWrite((q) => q.updateTable('online_evaluators').set(follow).where('id', '=', id));
  }

  /** Marks that spans landed while the evaluator's follow job ran. */
  async followAgain(id: string): Promise<void> {
    await this.db.typedWrite((q) =>
      q.updateTable('online_evaluators').set({ follow_again: true }).where('id', '=', id),
    );
  }

  async remove(workspaceId: string, id: string): Promise<boolean> {
    const gone = await this.db.typed((q) =>
      q.deleteFrom('online_evaluators').where('workspace_id', '=', workspaceId).where('id', '=', id).returning('id'),
    );
    return gone.length > 0;
  }

  /** The active evaluators of a dataset, locked: what a landing tells. */
  activeOfDatasetLocked(datasetId: string): Promise<EvaluatorRow[]> {
    return this.db.typed((q) =>
      q
        .selectFrom('online_evaluators')
        .selectAll()
        .where('dataset_id', '=', datasetId)
        .where('state', '=', 'active')
        .orderBy('id')
        .forUpdate(),
    );
  }

  /** Moves the cursor past the spans read and adds what they held to the counters. */
  async advance(id: string, cursor: number, counts: { spans: number; traces: number; sampled: number }): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('online_evaluators')
        .set((eb) => ({
          cursor_ordinal: sql<string>`greatest(cursor_ordinal, ${cursor}::bigint)`,
          spans_read: eb('spans_read', '+', String(counts.spans)),
          traces_seen: eb('traces_seen', '+', String(counts.traces)),
          targets_sampled: eb('targets_sampled', '+', String(counts.sampled)),
        }))
        .where('id', '=', id),
    );
  }

  /** Sets the status (ok, judge_unreachable, budget_exhausted); its time moves only when it changes. */
  async setStatus(id: string, status: string, detail: string | null): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('online_evaluators')
        .set({
          status,
          status_detail: detail,
          status_since: sql<Date>`CASE WHEN status = ${status} THEN status_since ELSE now() END`,
        })
        .where('id', '=', id),
    );
  }

  // Versions

  async insertVersion(evaluatorId: string, version: number, spec: JsonObject, createdBy: string | null): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .insertInto('online_evaluator_versions')
        .values({ evaluator_id: evaluatorId, version, spec: JSON.stringify(spec), created_by: createdBy }),
    );
  }

  async version(
    evaluatorId: string,
    version: number,
  ): Promise<{ version: number; spec: unknown; created_by: string | null; created_at: Date } | null> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('online_evaluator_versions')
        .select(['version', 'spec', 'created_by', 'created_at'])
        .where('evaluator_id', '=', evaluatorId)
        .where('version', '=', version),
    );
    return row ?? null;
  }

  versions(
    evaluatorId: string,
  ): Promise<Array<{ version: number; spec: unknown; created_by: string | null; created_at: Date }>> {
    return this.db.typed((q) =>
      q
        .selectFrom('online_evaluator_versions')
        .select(['version', 'spec', 'created_by', 'created_at'])
        .where('evaluator_id', '=', evaluatorId)
        .orderBy('version', 'desc'),
    );
  }

  // The ledger

  /**
   * Takes the targets into the ledger as pending. A target already there and still pending learns
   * what the newer spans say: complete once its end was seen (ready now), otherwise ready a quiet
   * period after its newest span. Answers how many were new.
   */
  async offer(rows: NewTarget[]): Promise<number> {
    if (!rows.length) return 0;
    const written = await this.db.typed((q) =>
      q
        .insertInto('online_targets')
        .values(rows)
        .onConflict((oc) =>
          oc.columns(['evaluator_id', 'evaluator_version', 'target_key']).doUpdateSet((eb) => ({
            complete: sql<boolean>`online_targets.complete OR ${eb.ref('excluded.complete')}`,
            ready_at: sql<Date>`CASE WHEN online_targets.complete THEN online_targets.ready_at
              WHEN ${eb.ref('excluded.complete')} THEN least(online_targets.ready_at, ${eb.ref('excluded.ready_at')})
              ELSE greatest(online_targets.ready_at, ${eb.ref('excluded.ready_at')}) END`,
          })),
        )
        .returning(sql<boolean>`xmax = 0`.as('inserted')),
    );
    return written.filter((r) => r.inserted).length;
  }

  /** Pending targets a batch saw more spans of (without a match of their own): ready a quiet period later. */
  async postpone(evaluatorId: string, version: number, keys: string[], readyAt: Date): Promise<void> {
    if (!keys.length) return;
    await this.db.typedWrite((q) =>
      q
        .updateTable('online_targets')
        .set({ ready_at: sql<Date>`greatest(ready_at, ${readyAt})` })
        .where('evaluator_id', '=', evaluatorId)
        .where('evaluator_version', '=', version)
        .where('target_key', 'in', keys)
        .where('state', '=', 'pending')
        .where('complete', '=', false),
    );
  }

  /**
   * Claims up to `limit` pending targets that are ready and not leased (or whose lease ran out:
   * their worker died), leasing them for `leaseSeconds`; parallel claimers skip each other's rows.
   * A backfill claims only its own.
   */
  @GenerateSql({ params: [DummyValue.UUID, 1, 50, 300, null] })
  async claim(
    evaluatorId: string,
    version: number,
    limit: number,
    leaseSeconds: number,
    backfillId: string | null,
  ): Promise<TargetRow[]> {
    return this.db.typed((q) =>
      q
        .updateTable('online_targets')
        .set((eb) => ({
          lease_until: sql<Date>`clock_timestamp() + make_interval(secs => ${leaseSeconds})`,
          attempts: eb('attempts', '+', 1),
        }))
        .where(
          ({ selectFrom }) =>
            sql<SqlBool>`(evaluator_id, evaluator_version, target_key) IN (${selectFrom('online_targets as t')
              .select(['t.evaluator_id', 't.evaluator_version', 't.target_key'])
              .where('t.evaluator_id', '=', evaluatorId)
              .where('t.evaluator_version', '=', version)
              .where('t.state', '=', 'pending')
              .where('t.ready_at', '<=', sql<Date>`clock_timestamp()`)
              .where((w) =>
                w.or([w('t.lease_until', 'is', null), w('t.lease_until', '<', sql<Date>`clock_timestamp()`)]),
              )
              .$if(backfillId !== null, (s) => s.where('t.backfill_id', '=', backfillId))
              .orderBy('t.ready_at')
              .limit(limit)
              .forUpdate()
              .skipLocked()})`,
        )
        .returningAll(),
    );
  }

  /** Ends claimed targets (scored, skipped or failed); answers those that were still pending. */
  async finishMany(
    evaluatorId: string,
    version: number,
    keys: string[],
    state: string,
    reason: string | null,
  ): Promise<Set<string>> {
    if (!keys.length) return new Set();
    const rows = await this.db.typed((q) =>
      q
        .updateTable('online_targets')
        .set({ state, reason, lease_until: null, finished_at: sql<Date>`clock_timestamp()` })
        .where('evaluator_id', '=', evaluatorId)
        .where('evaluator_version', '=', version)
        .where('target_key', 'in', keys)
        .where('state', '=', 'pending')
        .returning('target_key'),
    );
    return new Set(rows.map((r) => r.target_key));
  }

  /** Gives claimed targets back, ready again at `readyAt` (a judge that could not be reached). */
  async release(evaluatorId: string, version: number, keys: string[], readyAt: Date, reason: string): Promise<void> {
    if (!keys.length) return;
    await this.db.typedWrite((q) =>
      q
        .updateTable('online_targets')
        .set({ lease_until: null, ready_at: readyAt, reason })
        .where('evaluator_id', '=', evaluatorId)
        .where('evaluator_version', '=', version)
        .where('target_key', 'in', keys)
        .where('state', '=', 'pending'),
    );
  }

  /** When the next pending target of the version (a backfill's: of it) is ready, or null when none is pending. */
  async nextReady(evaluatorId: string, version: number, backfillId: string | null = null): Promise<Date | null> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('online_targets')
        .select((eb) => eb.fn.min<Date | null>(sql`greatest(ready_at, coalesce(lease_until, ready_at))`).as('at'))
        .where('evaluator_id', '=', evaluatorId)
        .where('evaluator_version', '=', version)
        .where('state', '=', 'pending')
        .$if(backfillId !== null, (s) => s.where('backfill_id', '=', backfillId)),
    );
    return row?.at ? new Date(row.at) : null;
  }

  /** Targets per state of the version (of a backfill, when named). */
  async counts(evaluatorId: string, version: number | null, backfillId: string | null = null): Promise<TargetCounts> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('online_targets')
        .select(['state', (eb) => eb.fn.countAll<string>().as('n')])
        .where('evaluator_id', '=', evaluatorId)
        .$if(version !== null, (s) => s.where('evaluator_version', '=', version!))
        .$if(backfillId !== null, (s) => s.where('backfill_id', '=', backfillId))
        .groupBy('state'),
    );
    const out: TargetCounts = { pending: 0, scored: 0, skipped: 0, failed: 0 };
    for (const r of rows) out[r.state as keyof TargetCounts] = Number(r.n);
    return out;
  }

  /** Targets of the evaluator scored since `since` (what a per-hour judge budget counts). */
  async scoredSince(evaluatorId: string, since: Date): Promise<number> {
    const [{ n }] = await this.db.typed((q) =>
      q
        .selectFrom('online_targets')
        .select(countN())
        .where('evaluator_id', '=', evaluatorId)
        .where('state', '=', 'scored')
        .where('finished_at', '>=', since),
    );
    return n;
  }

  /** Pending targets of older versions are not scored by the new one: skipped as superseded. */
  async supersede(evaluatorId: string, current: number): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('online_targets')
        .set({ state: 'skipped', reason: 'superseded', lease_until: null, finished_at: sql<Date>`clock_timestamp()` })
        .where('evaluator_id', '=', evaluatorId)
        .where('evaluator_version', '<', current)
        .where('state', '=', 'pending'),
    );
  }

  async targetPage(
    evaluatorId: string,
    filter: { version?: number; state?: string; backfillId?: string; traceId?: string },
    window: PageWindow,
  ): Promise<{ rows: TargetRow[]; total: number }> {
    const matching = (q: QueryBuilder) =>
      q
        .selectFrom('online_targets')
        .where('evaluator_id', '=', evaluatorId)
        .$if(filter.version !== undefined, (s) => s.where('evaluator_version', '=', filter.version!))
        .$if(filter.state !== undefined, (s) => s.where('state', '=', filter.state!))
        .$if(filter.backfillId !== undefined, (s) => s.where('backfill_id', '=', filter.backfillId!))
        .$if(filter.traceId !== undefined, (s) => s.where('trace_id', '=', filter.traceId!));
    const rows = await this.db.typed((q) =>
      matching(q)
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('target_key')
        .limit(window.take)
        .offset(window.skip),
    );
    const [, total] = await withTotal(rows, window, () => countOf(this.db, matching));
    return { rows, total };
  }

  // Backfills

  async insertBackfill(row: Insertable<OnlineBackfills>): Promise<BackfillRow> {
    const [created] = await this.db.typed((q) => q.insertInto('online_backfills').values(row).returningAll());
    return created;
  }

  async findBackfill(workspaceId: string, id: string): Promise<BackfillRow | null> {
    const [row] = await this.db.typed((q) =>
      q.selectFrom('online_backfills').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id),
    );
    return row ?? null;
  }

  async findBackfillUnscoped(id: string): Promise<BackfillRow | null> {
    const [row] = await this.db.typed((q) => q.selectFrom('online_backfills').selectAll().where('id', '=', id));
    return row ?? null;
  }

  async backfillPage(evaluatorId: string, window: PageWindow): Promise<{ rows: BackfillRow[]; total: number }> {
    const matching = (q: QueryBuilder) => q.selectFrom('online_backfills').where('evaluator_id', '=', evaluatorId);
    const rows = await this.db.typed((q) =>
      matching(q)
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(window.take)
        .offset(window.skip),
    );
    const [, total] = await withTotal(rows, window, () => countOf(this.db, matching));
    return { rows, total };
  }

  async addBackfillCounts(id: string, counts: { spans: number; sampled: number }): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('online_backfills')
        .set((eb) => ({
          spans_read: eb('spans_read', '+', String(counts.spans)),
          targets_sampled: eb('targets_sampled', '+', counts.sampled),
        }))
        .where('id', '=', id),
    );
  }
}
