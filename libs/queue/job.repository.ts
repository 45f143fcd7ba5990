import { Injectable, Logger } from '@nestjs/common';
import { DummyValue, GenerateSql } from '#libs/database/generate-sql.js';
import { sql, type ExpressionBuilder, type Selectable, type SelectQueryBuilder } from 'kysely';
import {
  DataSource,
  type EntitySubscriberInterface,
  type QueryRunner,
  type TransactionCommitEvent,
  type TransactionRollbackEvent,
} from 'typeorm';
import type { DB } from '#libs/database/schema.js';
import type { NarrowedRow } from '#libs/database/typed-queries.js';
import { Db, TransactionRunner } from '#libs/database/unit-of-work.js';
import type { JobTransition } from './job-outcome.js';
import type { EnqueueJob, Job, JobError, JobFilter, JobStatus, JsonObject, JsonValue } from './job.types.js';

/** A running job's next state: one of the error transitions, or success with its result. */
export type JobUpdate = JobTransition | { status: 'succeeded'; result: JsonValue };

/** Runs inside the transaction that moves a job to a terminal state (the `@OnJobSettled` hooks). */
export type SettledHook = (job: Job) => Promise<void>;

/**
 * A row of `jobs` as the queue reads it (`SELECT *`, `RETURNING *`): the schema's columns, the
 * CHECK-limited status and the jsonb columns given the shapes the queue writes.
 */
type JobRow = NarrowedRow<
  Selectable<DB['jobs']>,
  {
    status: JobStatus;
    payload: JsonObject;
    progress: JsonObject | null;
    result: JsonValue | null;
    error: JobError | null;
  }
>;

function toJob(row: JobRow): Job {
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    workspaceId: row.workspace_id,
    payload: row.payload,
    priority: row.priority,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    runAfter: row.run_after,
    leaseOwner: row.lease_owner,
    leaseExpiresAt: row.lease_expires_at,
    progress: row.progress,
    result: row.result,
    error: row.error,
    idempotencyKey: row.idempotency_key,
    targetType: row.target_type,
    targetId: row.target_id,
    createdBy: row.created_by,
    cancelRequestedAt: row.cancel_requested_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

/** A jsonb value as a parameter (node-postgres would send a JavaScript array as a PostgreSQL array). */
const json = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));

const now = sql<Date>`now()`;

/** `seconds` from now, as the database counts time (leases, retry delays). */
const fromNow = (seconds: number) => sql<Date>`now() + make_interval(secs => ${seconds})`;

/** A claim of a queued job by the worker holding `token`: a new attempt, leased for `leaseSeconds`. */
const claimed = (token: string, leaseSeconds: number) => (eb: ExpressionBuilder<DB, 'jobs'>) => ({
  status: 'running',
  lease_owner: token,
  lease_expires_at: fromNow(leaseSeconds),
  attempts: eb('attempts', '+', 1),
  started_at: now,
  updated_at: now,
});

/** The running job `id` while the worker holding `token` has it (a worker that lost its lease matches nothing). */
const heldBy = (id: string, token: string) => (eb: ExpressionBuilder<DB, 'jobs'>) =>
  eb.and([eb('id', '=', id), eb('lease_owner', '=', token), eb('status', '=', 'running')]);

/** The queue views' filter (`JobFilter`) on a statement over `jobs`. */
function matching<O>(qb: SelectQueryBuilder<DB, 'jobs', O>, filter: JobFilter): SelectQueryBuilder<DB, 'jobs', O> {
  const { workspaceId, targetType, targetId, type, status } = filter;
  return qb
    .$if(!!workspaceId, (q) => q.where('workspace_id', '=', workspaceId!))
    .$if(!!targetType, (q) => q.where('target_type', '=', targetType!))
    .$if(!!targetId, (q) => q.where('target_id', '=', targetId!))
    .$if(!!type, (q) => q.where('type', '=', sql<string>`ANY(${Array.isArray(type) ? type : [type]}::text[])`))
    .$if(!!status, (q) =>
      q.where('status', '=', sql<string>`ANY(${Array.isArray(status) ? status : [status]}::text[])`),
    );
}

interface PendingAfterCommit {
  depth: number;
  run: () => void;
}

/**
 * Queries of the `jobs` table. Every state change of a running job is conditional on the claim
 * token (`lease_owner`) and `status = 'running'`, so a worker that lost its lease changes nothing.
 */
@Injectable()
export class JobRepository implements EntitySubscriberInterface {
  private readonly logger = new Logger('Queue');
  private readonly pending = new WeakMap<QueryRunner, PendingAfterCommit[]>();

  constructor(
    dataSource: DataSource,
    private readonly db: Db,
    private readonly transactions: TransactionRunner,
  ) {
    // Listens for commits and rollbacks so work can wait for the caller's transaction.
    dataSource.subscribers.push(this);
  }

  /**
   * Runs `fn` once the open transaction commits (at once without one); drops it when the
   * transaction, or the savepoint it was registered in, rolls back.
   */
  afterCommit(fn: () => void): void {
    const runner = this.db.manager.queryRunner;
    if (!runner || !runner.isTransactionActive) {
      this.runSafely(fn);
      return;
    }
    const list = this.pending.get(runner) ?? [];
    list.push({ depth: (runner as QueryRunner & { transactionDepth?: number }).transactionDepth ?? 1, run: fn });
    this.pending.set(runner, list);
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    const runner = event.queryRunner;
    if (runner.isTransactionActive) return; // a savepoint was released; the outer transaction may still roll back
    const list = this.pending.get(runner);
    this.pending.delete(runner);
    for (const entry of list ?? []) this.runSafely(entry.run);
  }

  /** The data did commit: a failing follow-up must not make the caller think otherwise. */
  private runSafely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger.error(`after-commit work failed: ${(err as Error)?.stack ?? err}`);
    }
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    const runner = event.queryRunner;
    const list = this.pending.get(runner);
    if (!list) return;
    const depth = (runner as QueryRunner & { transactionDepth?: number }).transactionDepth ?? 0;
    const kept = runner.isTransactionActive ? list.filter((entry) => entry.depth <= depth) : [];
    if (kept.length) this.pending.set(runner, kept);
    else this.pending.delete(runner);
  }

  /** Inserts the job, or returns the existing one with the same (type, idempotency key). */
  async insert(
    request: Omit<EnqueueJob, 'type' | 'payload'> & { type: string; payload: JsonObject; maxAttempts: number },
  ): Promise<{ job: Job; created: boolean }> {
    const rows = await this.db.typed((q) =>
      q
        .insertInto('jobs')
        .values({
          type: request.type,
          payload: json(request.payload),
          workspace_id: request.workspaceId ?? null,
          target_type: request.targetType ?? null,
          target_id: request.targetId ?? null,
          idempotency_key: request.idempotencyKey ?? null,
          max_attempts: request.maxAttempts,
          priority: request.priority ?? 0,
          run_after: request.runAfter ?? now,
          created_by: request.createdBy ?? null,
        })
        .onConflict((oc) =>
          oc.columns(['type', 'idempotency_key']).where('idempotency_key', 'is not', null).doNothing(),
        )
        .returningAll()
        .$castTo<JobRow>(),
    );
    if (rows.length) return { job: toJob(rows[0]), created: true };
    const existing = await this.db.typed((q) =>
      q
        .selectFrom('jobs')
        .selectAll()
        .where('type', '=', request.type)
        .where('idempotency_key', '=', request.idempotencyKey!)
        .$castTo<JobRow>(),
    );
    return { job: toJob(existing[0]), created: false };
  }

  async findById(id: string): Promise<Job | null> {
    const rows = await this.db.typed((q) => q.selectFrom('jobs').selectAll().where('id', '=', id).$castTo<JobRow>());
    return rows.length ? toJob(rows[0]) : null;
  }

  async findLatestByTarget(targetType: string, targetId: string, type?: string): Promise<Job | null> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('jobs')
        .selectAll()
        .where('target_type', '=', targetType)
        .where('target_id', '=', targetId)
        .$if(type !== undefined && type !== null, (w) => w.where('type', '=', type!))
        .orderBy('seq', 'desc')
        .limit(1)
        .$castTo<JobRow>(),
    );
    return rows.length ? toJob(rows[0]) : null;
  }

  /** `order: 'claim'` lists in the order workers take jobs (priority, then due time). */
  async list(
    filter: JobFilter,
    window: { skip: number; take: number },
    order: 'newest' | 'claim',
  ): Promise<[Job[], number]> {
    const rows = await this.db.typed((q) =>
      matching(q.selectFrom('jobs').selectAll(), filter)
        .$if(order === 'claim', (o) => o.orderBy('priority', 'desc').orderBy('run_after').orderBy('seq'))
        .$if(order !== 'claim', (o) => o.orderBy('seq', 'desc'))
        .offset(window.skip)
        .limit(window.take)
        .$castTo<JobRow>(),
    );
    const [{ total }] = await this.db.typed((q) =>
      matching(q.selectFrom('jobs').select(sql<number>`count(*)::int`.as('total')), filter),
    );
    return [rows.map(toJob), total];
  }

  countByStatus(filter: JobFilter): Promise<Array<{ status: JobStatus; count: number }>> {
    return this.db.typed((q) =>
      matching(q.selectFrom('jobs').select(['status', sql<number>`count(*)::int`.as('count')]), filter)
        .groupBy('status')
        .$narrowType<{ status: JobStatus }>(),
    );
  }

  /** Whether a job of another type than `type` is queued and due (a long job's cue to give its slot up). */
  async dueOtherThan(type: string): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('jobs')
        .select('id')
        .where('status', '=', 'queued')
        .where('run_after', '<=', now)
        .where('type', '!=', type)
        .limit(1),
    );
    return rows.length > 0;
  }

  /** Takes the next due queued job (skipping rows other workers are taking). */
  @GenerateSql({ params: [DummyValue.UUID, 60] })
  async claimNext(token: string, leaseSeconds: number): Promise<Job | null> {
    const rows = await this.db.typed((q) =>
      q
        .updateTable('jobs')
        .set(claimed(token, leaseSeconds))
        .where('id', '=', (eb) =>
          eb
            .selectFrom('jobs')
            .select('id')
            .where('status', '=', 'queued')
            .where('run_after', '<=', now)
            .orderBy('priority', 'desc')
            .orderBy('run_after')
            .orderBy('seq')
            .limit(1)
            .forUpdate()
            .skipLocked(),
        )
        .where('status', '=', 'queued')
        .returningAll()
        .$castTo<JobRow>(),
    );
    return rows.length ? toJob(rows[0]) : null;
  }

  /**
   * Takes one job by id when it is queued and due (BullMQ delivers ids). The small tolerance
   * absorbs clock differences between the process that computed a delay and the database.
   */
  async claimById(id: string, token: string, leaseSeconds: number): Promise<Job | null> {
    const rows = await this.db.typed((q) =>
      q
        .updateTable('jobs')
        .set(claimed(token, leaseSeconds))
        .where('id', '=', id)
        .where('status', '=', 'queued')
        .where('run_after', '<=', sql<Date>`now() + interval '2 seconds'`)
        .returningAll()
        .$castTo<JobRow>(),
    );
    return rows.length ? toJob(rows[0]) : null;
  }

  /** Extends a lease still held (and not yet expired); null when it is lost. */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID2, 60] })
  async heartbeat(id: string, token: string, leaseSeconds: number): Promise<{ cancelRequested: boolean } | null> {
    const rows = await this.db.typed((q) =>
      q
        .updateTable('jobs')
        .set({ lease_expires_at: fromNow(leaseSeconds), updated_at: now })
        .where(heldBy(id, token))
        .where('lease_expires_at', '>', now)
        .returning('cancel_requested_at'),
    );
    return rows.length ? { cancelRequested: rows[0].cancel_requested_at !== null } : null;
  }

  async saveProgress(id: string, token: string, progress: JsonObject): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q
        .updateTable('jobs')
        .set({ progress: json(progress), updated_at: now })
        .where(heldBy(id, token))
        .returning('id'),
    );
    return rows.length > 0;
  }

  /** Which of these running jobs have a cancellation request. */
  async cancelRequested(ids: string[]): Promise<string[]> {
    if (!ids.length) return [];
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('jobs')
        .select('id')
        .where('id', '=', sql<string>`ANY(${ids}::uuid[])`)
        .where('cancel_requested_at', 'is not', null),
    );
    return rows.map((r) => r.id);
  }

  /**
   * A job's next state: back to the queue after a delay (its lease given up), or ended (with its
   * result when it succeeded). The error is the transition's (none on success).
   */
  private async apply(id: string, update: JobUpdate): Promise<Job> {
    const next =
      update.status === 'queued'
        ? { run_after: fromNow(update.delayMs / 1000), lease_owner: null, finished_at: null }
        : update.status === 'succeeded'
          ? { result: json(update.result ?? null), finished_at: now }
          : { finished_at: now };
    const rows = await this.db.typed((q) =>
      q
        .updateTable('jobs')
        .set({
          status: update.status,
          error: update.status === 'succeeded' ? null : json(update.error),
          lease_expires_at: null,
          updated_at: now,
          ...next,
        })
        .where('id', '=', id)
        .returningAll()
        .$castTo<JobRow>(),
    );
    return toJob(rows[0]);
  }

  /** Runs the settled hooks in a savepoint each, so one failing hook cannot undo the transition. */
  private async runHooks(job: Job, hooks: SettledHook[], onHookError: (err: unknown) => void): Promise<void> {
    for (const hook of hooks) {
      try {
        await this.transactions.savepoint(() => hook(job));
      } catch (err) {
        onHookError(err);
      }
    }
  }

  /**
   * Moves a running job held by `token` to its next state, in one transaction with the
   * settled hooks when that state is terminal. Null when the lease is no longer held.
   */
  settle(
    id: string,
    token: string,
    decide: (job: Job) => JobUpdate,
    hooks: SettledHook[],
    onHookError: (err: unknown) => void,
  ): Promise<Job | null> {
    return this.transactions.run(async () => {
      const rows = await this.db.typed((q) =>
        q.selectFrom('jobs').selectAll().where(heldBy(id, token)).forUpdate().$castTo<JobRow>(),
      );
      if (!rows.length) return null;
      const job = await this.apply(id, decide(toJob(rows[0])));
      if (job.status !== 'queued') await this.runHooks(job, hooks, onHookError);
      return job;
    });
  }

  /** Running jobs whose lease expired (their worker died or hung). */
  expiredLeases(limit: number): Promise<Array<{ id: string; type: string }>> {
    return this.db.typed((q) =>
      q
        .selectFrom('jobs')
        .select(['id', 'type'])
        .where('status', '=', 'running')
        .where('lease_expires_at', '<', now)
        .orderBy('lease_expires_at')
        .limit(limit),
    );
  }

  /** Moves one expired running job on (requeue, fail or cancel); null when another process did. */
  recoverExpired(
    id: string,
    decide: (job: Job) => JobTransition,
    hooks: SettledHook[],
    onHookError: (err: unknown) => void,
  ): Promise<Job | null> {
    return this.transactions.run(async () => {
      const rows = await this.db.typed((q) =>
        q
          .selectFrom('jobs')
          .selectAll()
          .where('id', '=', id)
          .where('status', '=', 'running')
          .where('lease_expires_at', '<', now)
          .forUpdate()
          .skipLocked()
          .$castTo<JobRow>(),
      );
      if (!rows.length) return null;
      const job = await this.apply(id, decide(toJob(rows[0])));
      if (job.status !== 'queued') await this.runHooks(job, hooks, onHookError);
      return job;
    });
  }

  /**
   * Gives jobs back to the queue on shutdown: the interrupted attempt does not count. Jobs with
   * a cancellation request stay running; the sweeper cancels them when their lease expires.
   */
  @GenerateSql({ params: [[DummyValue.UUID], [DummyValue.UUID2]] })
  async release(ids: string[], tokens: string[]): Promise<Job[]> {
    if (!ids.length) return [];
    const rows = await this.db.typed((q) =>
      q
        .updateTable('jobs')
        .set((eb) => ({
          status: 'queued',
          attempts: eb.fn('greatest', [eb('attempts', '-', 1), eb.lit(0)]),
          run_after: now,
          lease_owner: null,
          lease_expires_at: null,
          started_at: null,
          updated_at: now,
        }))
        .where('id', '=', sql<string>`ANY(${ids}::uuid[])`)
        .where('lease_owner', '=', sql<string>`ANY(${tokens}::text[])`)
        .where('status', '=', 'running')
        .where('cancel_requested_at', 'is', null)
        .returningAll()
        .$castTo<JobRow>(),
    );
    return rows.map(toJob);
  }

  /**
   * Cancels a queued job at once (with its settled hooks), or records the request on a running
   * one. Terminal jobs are returned unchanged.
   */
  async cancel(
    id: string,
    hooks: (job: Job) => SettledHook[],
    onHookError: (err: unknown) => void,
  ): Promise<Job | null> {
    return this.transactions.run(async (): Promise<Job | null> => {
      const rows = await this.db.typed((q) =>
        q.selectFrom('jobs').selectAll().where('id', '=', id).forUpdate().$castTo<JobRow>(),
      );
      if (!rows.length) return null;
      const current = toJob(rows[0]);
      if (current.status === 'queued') {
        const error: JobError = {
          message: 'cancelled while queued',
          code: 'cancelled',
          attempts: current.attempts,
          at: new Date().toISOString(),
        };
        const cancelled = await this.db.typed((q) =>
          q
            .updateTable('jobs')
            .set({
              status: 'cancelled',
              cancel_requested_at: now,
              error: json(error),
              finished_at: now,
              updated_at: now,
            })
            .where('id', '=', id)
            .returningAll()
            .$castTo<JobRow>(),
        );
        const job = toJob(cancelled[0]);
        await this.runHooks(job, hooks(job), onHookError);
        return job;
      }
      if (current.status === 'running' && !current.cancelRequestedAt) {
        const updated = await this.db.typed((q) =>
          q
            .updateTable('jobs')
            .set({ cancel_requested_at: now, updated_at: now })
            .where('id', '=', id)
            .returningAll()
            .$castTo<JobRow>(),
        );
        return toJob(updated[0]);
      }
      return current;
    });
  }

  /** Queued jobs due for a while: BullMQ should hold them; the sweeper re-adds any it lost. */
  async overdueQueued(overdueSeconds: number, limit: number): Promise<Job[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('jobs')
        .selectAll()
        .where('status', '=', 'queued')
        .where('run_after', '<=', sql<Date>`now() - make_interval(secs => ${overdueSeconds})`)
        .orderBy('priority', 'desc')
        .orderBy('run_after')
        .orderBy('seq')
        .limit(limit)
        .$castTo<JobRow>(),
    );
    return rows.map(toJob);
  }

  /** The readiness probe of the in-process queue: the jobs table answers. */
  async ping(): Promise<void> {
    await this.db.typed((q) =>
      q
        .selectFrom('jobs')
        .select((eb) => eb.lit(1).as('one'))
        .limit(1),
    );
  }
}
