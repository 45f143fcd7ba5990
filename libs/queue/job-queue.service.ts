import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '#libs/config/app-config.js';
import { isUuid } from '#libs/common/uuid.js';
import { QUEUE_DRIVER, type QueueDriver } from './drivers/queue-driver.js';
import { JobExecutor } from './job-executor.js';
import { JobHandlerRegistry } from './job-handler.registry.js';
import { JobRepository } from './job.repository.js';
import {
  type EnqueueJob,
  type EnqueueResult,
  type Job,
  type JobFilter,
  JOB_STATUSES,
  type JobStatus,
  type JobOf,
  type JobType,
} from './job.types.js';
import { trackedIdOf } from './tracked-job.js';
import { TrackedRecords } from './tracked-records.service.js';

const MAX_TYPE_LENGTH = 100;
const MAX_IDEMPOTENCY_KEY_LENGTH = 200;
const HOUR_MS = 3600_000;

/**
 * The one way to start asynchronous work. `enqueue` writes the durable job record (in the
 * caller's unit of work when one is open, so the family's record and its job commit or roll
 * back together) and hands it to the driver only after the commit.
 */
@Injectable()
export class JobQueue {
  private readonly logger = new Logger('Queue');

  constructor(
    private readonly config: AppConfig,
    private readonly repo: JobRepository,
    private readonly registry: JobHandlerRegistry,
    private readonly executor: JobExecutor,
    private readonly tracked: TrackedRecords,
    @Inject(QUEUE_DRIVER) private readonly driver: QueueDriver,
  ) {}

  /** Which driver delivers jobs in this process. */
  get driverKind(): QueueDriver['kind'] {
    return this.driver.kind;
  }

  /** This process's worker id (the first part of the `lease_owner` of the jobs it runs). */
  get workerId(): string {
    return this.executor.identity.workerId;
  }

  /**
   * Queues a job. For a type whose handler `tracks` a record, the payload names the record and
   * the record gets the job's id (in the caller's unit of work, with the job).
   */
  /**
   * Queues `type`'s job of the next clock hour (an hourly sweep): one however many processes ask,
   * for the hour names it (its idempotency key).
   */
  async enqueueNextHour<T extends JobType>(type: T, payload: EnqueueJob<T>['payload']): Promise<void> {
    const next = Math.floor(Date.now() / HOUR_MS) * HOUR_MS + HOUR_MS;
    await this.enqueue({
      type,
      payload,
      idempotencyKey: `${type}:${new Date(next).toISOString()}`,
      runAfter: new Date(next),
    });
  }

  async enqueue<T extends JobType>(request: EnqueueJob<T>): Promise<EnqueueResult<T>> {
    const handler = this.registry.handler(request.type);
    if (!handler) {
      throw new Error(
        `cannot enqueue job type "${request.type}": no @JobHandler('${request.type}') method is registered (known: ${this.registry.types().join(', ') || 'none'})`,
      );
    }
    if (request.type.length > MAX_TYPE_LENGTH)
      throw new Error(`job type "${request.type}" is longer than ${MAX_TYPE_LENGTH} characters`);
    if (request.idempotencyKey && request.idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
      throw new Error(`idempotency key is longer than ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
    }
    if (request.payload === null || typeof request.payload !== 'object' || Array.isArray(request.payload)) {
      throw new Error(`job ${request.type}: the payload must be a JSON object`);
    }
    if (request.targetId && !isUuid(request.targetId)) throw new Error(`job ${request.type}: targetId must be a UUID`);
    const maxAttempts = request.maxAttempts ?? handler.maxAttempts ?? this.config.env.JOB_MAX_ATTEMPTS;
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 100)
      throw new Error(`job ${request.type}: maxAttempts must be an integer from 1 to 100`);

    if (handler.tracks) trackedIdOf(handler.tracks, request);
    const { job, created } = await this.repo.insert({ ...request, maxAttempts });
    // The record names its job in the same transaction (a tracked type's record is made with its job).
    if (handler.tracks) await this.tracked.attachJob(handler.tracks, job);
    if (created) this.repo.afterCommit(() => this.driver.dispatch([job]));
    return { job: job as JobOf<T>, created };
  }

  /** The job, or null (also for a malformed id). */
  get(id: string): Promise<Job | null> {
    return isUuid(id) ? this.repo.findById(id) : Promise.resolve(null);
  }

  /** The newest job working for this record (optionally of one type). */
  latestFor(targetType: string, targetId: string, type?: string): Promise<Job | null> {
    return isUuid(targetId) ? this.repo.findLatestByTarget(targetType, targetId, type) : Promise.resolve(null);
  }

  /**
   * A page of jobs for queue views. `order: 'claim'` lists in the order workers take them
   * (what waits next); the default lists the newest first.
   */
  async list(
    filter: JobFilter,
    window: { skip: number; take: number },
    order: 'newest' | 'claim' = 'newest',
  ): Promise<{ items: Job[]; total: number }> {
    const [items, total] = await this.repo.list(filter, window, order);
    return { items, total };
  }

  /**
   * Stops this process's workers: no more claims, running jobs get QUEUE_SHUTDOWN_GRACE_SECONDS,
   * then are aborted and handed back. Idempotent; the shutdown sequence starts it early so jobs
   * and requests drain at the same time.
   */
  stopWorkers(): Promise<void> {
    return this.driver.stop();
  }

  /** The jobs this process is running now (shutdown reports them). */
  running(): Array<{ id: string; type: string; started_ms_ago: number }> {
    return this.executor.running();
  }

  /** How many jobs are in each state (every state present, zero when none). */
  /**
   * Whether jobs of other types than `type` wait, due, for a worker: a handler that works in turns
   * (online evaluation's follow job) ends its turn early then, so it never keeps them waiting.
   */
  othersDue(type: string): Promise<boolean> {
    return this.repo.dueOtherThan(type);
  }

  async countByStatus(filter: JobFilter = {}): Promise<Record<JobStatus, number>> {
    const counts = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
    for (const row of await this.repo.countByStatus(filter)) counts[row.status] = row.count;
    return counts;
  }

  /**
   * Cancels a queued job at once (its `@OnJobSettled` listeners run in the same transaction);
   * for a running one records the request, and its handler's signal aborts (here at once,
   * in other processes within about a second). A finished job is returned unchanged.
   */
  async cancel(id: string): Promise<Job | null> {
    if (!isUuid(id)) return null;
    const job = await this.repo.cancel(
      id,
      (j) => this.registry.settledListeners(j.type),
      (err) => this.logger.error(`job ${id}: an @OnJobSettled listener failed: ${(err as Error)?.stack ?? err}`),
    );
    if (job?.status === 'running') {
      this.repo.afterCommit(() => this.executor.abortLocal(id, 'cancelled', 'the job was cancelled'));
    }
    return job;
  }
}
