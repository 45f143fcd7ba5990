import { Injectable, Logger } from '@nestjs/common';
import {
  DataSource,
  type EntitySubscriberInterface,
  type QueryRunner,
  type TransactionCommitEvent,
  type TransactionRollbackEvent,
} from 'typeorm';
import { Db, TransactionRunner } from '../database/unit-of-work.js';
import type { JobTransition } from './job-outcome.js';
import type { EnqueueJob, Job, JobFilter, JobStatus, JsonObject, JsonValue } from './job.types.js';

/** A running job's next state: one of the error transitions, or success with its result. */
export type JobUpdate = JobTransition | { status: 'succeeded'; result: JsonValue };

/** Runs inside the transaction that moves a job to a terminal state (the `@OnJobSettled` hooks). */
export type SettledHook = (job: Job) => Promise<void>;

interface JobRow {
  id: string;
  workspace_id: string | null;
  type: string;
  payload: JsonObject;
  status: JobStatus;
  priority: number;
  attempts: number;
  max_attempts: number;
  run_after: Date;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  progress: JsonObject | null;
  result: JsonValue | null;
  error: Job['error'];
  idempotency_key: string | null;
  target_type: string | null;
  target_id: string | null;
  created_by: string | null;
  cancel_requested_at: Date | null;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

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

/** `UPDATE … RETURNING` answers `[rows, affected]` through TypeORM's postgres driver. */
function updatedRows(result: unknown): JobRow[] {
  return (result as [JobRow[], number])[0];
}

const json = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));

const CLAIM_SET = `status = 'running', lease_owner = $1, lease_expires_at = now() + make_interval(secs => $2),
  attempts = attempts + 1, started_at = now(), updated_at = now()`;

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
  async insert(request: EnqueueJob & { maxAttempts: number }): Promise<{ job: Job; created: boolean }> {
    const db = this.db;
    const rows: JobRow[] = await db.query(
      `INSERT INTO jobs (type, payload, workspace_id, target_type, target_id, idempotency_key, max_attempts, priority, run_after, created_by)
       VALUES ($1, $2::jsonb, $3, $4, $5, $6, $7, $8, COALESCE($9::timestamptz, now()), $10)
       ON CONFLICT (type, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING *`,
      [
        request.type,
        json(request.payload),
        request.workspaceId ?? null,
        request.targetType ?? null,
        request.targetId ?? null,
        request.idempotencyKey ?? null,
        request.maxAttempts,
        request.priority ?? 0,
        request.runAfter ?? null,
        request.createdBy ?? null,
      ],
    );
    if (rows.length) return { job: toJob(rows[0]), created: true };
    const existing: JobRow[] = await db.query('SELECT * FROM jobs WHERE type = $1 AND idempotency_key = $2', [
      request.type,
      request.idempotencyKey,
    ]);
    return { job: toJob(existing[0]), created: false };
  }

  async findById(id: string): Promise<Job | null> {
    const rows: JobRow[] = await this.db.query('SELECT * FROM jobs WHERE id = $1', [id]);
    return rows.length ? toJob(rows[0]) : null;
  }

  async findLatestByTarget(targetType: string, targetId: string, type?: string): Promise<Job | null> {
    const rows: JobRow[] = await this.db.query(
      `SELECT * FROM jobs WHERE target_type = $1 AND target_id = $2 AND ($3::text IS NULL OR type = $3)
       ORDER BY seq DESC LIMIT 1`,
      [targetType, targetId, type ?? null],
    );
    return rows.length ? toJob(rows[0]) : null;
  }

  private where(filter: JobFilter): { sql: string; params: unknown[] } {
    const clauses: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      clauses.push(sql.replace('?', `$${params.length}`));
    };
    if (filter.workspaceId) add('workspace_id = ?', filter.workspaceId);
    if (filter.targetType) add('target_type = ?', filter.targetType);
    if (filter.targetId) add('target_id = ?', filter.targetId);
    if (filter.type) add('type = ANY(?::text[])', Array.isArray(filter.type) ? filter.type : [filter.type]);
    if (filter.status) add('status = ANY(?::text[])', Array.isArray(filter.status) ? filter.status : [filter.status]);
    return { sql: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params };
  }

  /** `order: 'claim'` lists in the order workers take jobs (priority, then due time). */
  async list(
    filter: JobFilter,
    window: { skip: number; take: number },
    order: 'newest' | 'claim',
  ): Promise<[Job[], number]> {
    const { sql, params } = this.where(filter);
    const orderBy = order === 'claim' ? 'priority DESC, run_after, seq' : 'seq DESC';
    const rows: JobRow[] = await this.db.query(
      `SELECT * FROM jobs ${sql} ORDER BY ${orderBy} OFFSET $${params.length + 1} LIMIT $${params.length + 2}`,
      [...params, window.skip, window.take],
    );
    const [{ total }] = await this.db.query(`SELECT count(*)::int AS total FROM jobs ${sql}`, params);
    return [rows.map(toJob), total];
  }

  async countByStatus(filter: JobFilter): Promise<Array<{ status: JobStatus; count: number }>> {
    const { sql, params } = this.where(filter);
    return this.db.query(`SELECT status, count(*)::int AS count FROM jobs ${sql} GROUP BY status`, params);
  }

  /** Takes the next due queued job (skipping rows other workers are taking). */
  async claimNext(token: string, leaseSeconds: number): Promise<Job | null> {
    const rows = updatedRows(
      await this.db.query(
        `UPDATE jobs SET ${CLAIM_SET}
         WHERE id = (SELECT id FROM jobs WHERE status = 'queued' AND run_after <= now()
                     ORDER BY priority DESC, run_after, seq FOR UPDATE SKIP LOCKED LIMIT 1)
           AND status = 'queued'
         RETURNING *`,
        [token, leaseSeconds],
      ),
    );
    return rows.length ? toJob(rows[0]) : null;
  }

  /**
   * Takes one job by id when it is queued and due (BullMQ delivers ids). The small tolerance
   * absorbs clock differences between the process that computed a delay and the database.
   */
  async claimById(id: string, token: string, leaseSeconds: number): Promise<Job | null> {
    const rows = updatedRows(
      await this.db.query(
        `UPDATE jobs SET ${CLAIM_SET}
         WHERE id = $3 AND status = 'queued' AND run_after <= now() + interval '2 seconds'
         RETURNING *`,
        [token, leaseSeconds, id],
      ),
    );
    return rows.length ? toJob(rows[0]) : null;
  }

  /** Extends a lease still held (and not yet expired); null when it is lost. */
  async heartbeat(id: string, token: string, leaseSeconds: number): Promise<{ cancelRequested: boolean } | null> {
    const rows = updatedRows(
      await this.db.query(
        `UPDATE jobs SET lease_expires_at = now() + make_interval(secs => $3), updated_at = now()
         WHERE id = $1 AND lease_owner = $2 AND status = 'running' AND lease_expires_at > now()
         RETURNING cancel_requested_at`,
        [id, token, leaseSeconds],
      ),
    ) as unknown as Array<{ cancel_requested_at: Date | null }>;
    return rows.length ? { cancelRequested: rows[0].cancel_requested_at !== null } : null;
  }

  async saveProgress(id: string, token: string, progress: JsonObject): Promise<boolean> {
    const [, affected] = (await this.db.query(
      `UPDATE jobs SET progress = $3::jsonb, updated_at = now() WHERE id = $1 AND lease_owner = $2 AND status = 'running'`,
      [id, token, json(progress)],
    )) as [unknown, number];
    return affected > 0;
  }

  /** Which of these running jobs have a cancellation request. */
  async cancelRequested(ids: string[]): Promise<string[]> {
    if (!ids.length) return [];
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT id FROM jobs WHERE id = ANY($1::uuid[]) AND cancel_requested_at IS NOT NULL`,
      [ids],
    );
    return rows.map((r) => r.id);
  }

  private async apply(id: string, update: JobUpdate): Promise<Job> {
    const rows = updatedRows(
      await this.db.query(
        `UPDATE jobs SET
           status = $2,
           run_after = CASE WHEN $2 = 'queued' THEN now() + make_interval(secs => $3) ELSE run_after END,
           error = $4::jsonb,
           result = CASE WHEN $2 = 'succeeded' THEN $5::jsonb ELSE result END,
           lease_owner = CASE WHEN $2 = 'queued' THEN NULL ELSE lease_owner END,
           lease_expires_at = NULL,
           finished_at = CASE WHEN $2 = 'queued' THEN NULL ELSE now() END,
           updated_at = now()
         WHERE id = $1
         RETURNING *`,
        [
          id,
          update.status,
          update.status === 'queued' ? update.delayMs / 1000 : 0,
          update.status === 'succeeded' ? null : json(update.error),
          update.status === 'succeeded' ? json(update.result ?? null) : null,
        ],
      ),
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
      const rows: JobRow[] = await this.db.query(
        `SELECT * FROM jobs WHERE id = $1 AND lease_owner = $2 AND status = 'running' FOR UPDATE`,
        [id, token],
      );
      if (!rows.length) return null;
      const job = await this.apply(id, decide(toJob(rows[0])));
      if (job.status !== 'queued') await this.runHooks(job, hooks, onHookError);
      return job;
    });
  }

  /** Running jobs whose lease expired (their worker died or hung). */
  async expiredLeases(limit: number): Promise<Array<{ id: string; type: string }>> {
    return this.db.query(
      `SELECT id, type FROM jobs WHERE status = 'running' AND lease_expires_at < now() ORDER BY lease_expires_at LIMIT $1`,
      [limit],
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
      const rows: JobRow[] = await this.db.query(
        `SELECT * FROM jobs WHERE id = $1 AND status = 'running' AND lease_expires_at < now() FOR UPDATE SKIP LOCKED`,
        [id],
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
  async release(ids: string[], tokens: string[]): Promise<Job[]> {
    if (!ids.length) return [];
    const rows = updatedRows(
      await this.db.query(
        `UPDATE jobs SET status = 'queued', attempts = GREATEST(attempts - 1, 0), run_after = now(),
           lease_owner = NULL, lease_expires_at = NULL, started_at = NULL, updated_at = now()
         WHERE id = ANY($1::uuid[]) AND lease_owner = ANY($2::text[]) AND status = 'running' AND cancel_requested_at IS NULL
         RETURNING *`,
        [ids, tokens],
      ),
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
      const rows: JobRow[] = await this.db.query('SELECT * FROM jobs WHERE id = $1 FOR UPDATE', [id]);
      if (!rows.length) return null;
      const current = toJob(rows[0]);
      if (current.status === 'queued') {
        const error = {
          message: 'cancelled while queued',
          code: 'cancelled',
          attempts: current.attempts,
          at: new Date().toISOString(),
        };
        const cancelled = updatedRows(
          await this.db.query(
            `UPDATE jobs SET status = 'cancelled', cancel_requested_at = now(), error = $2::jsonb, finished_at = now(), updated_at = now()
             WHERE id = $1 RETURNING *`,
            [id, json(error)],
          ),
        );
        const job = toJob(cancelled[0]);
        await this.runHooks(job, hooks(job), onHookError);
        return job;
      }
      if (current.status === 'running' && !current.cancelRequestedAt) {
        const updated = updatedRows(
          await this.db.query(
            `UPDATE jobs SET cancel_requested_at = now(), updated_at = now() WHERE id = $1 RETURNING *`,
            [id],
          ),
        );
        return toJob(updated[0]);
      }
      return current;
    });
  }

  /** Queued jobs due for a while: BullMQ should hold them; the sweeper re-adds any it lost. */
  async overdueQueued(overdueSeconds: number, limit: number): Promise<Job[]> {
    const rows: JobRow[] = await this.db.query(
      `SELECT * FROM jobs WHERE status = 'queued' AND run_after <= now() - make_interval(secs => $1)
       ORDER BY priority DESC, run_after, seq LIMIT $2`,
      [overdueSeconds, limit],
    );
    return rows.map(toJob);
  }

  /** The readiness probe of the in-process queue: the jobs table answers. */
  async ping(): Promise<void> {
    await this.db.query('SELECT 1 FROM jobs LIMIT 1');
  }
}
