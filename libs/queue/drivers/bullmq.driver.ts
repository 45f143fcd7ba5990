import { Logger } from '@nestjs/common';
import { Queue, Worker, type Job as BullJob } from 'bullmq';
import { Redis } from 'ioredis';
import type { AppConfig } from '#libs/config/app-config.js';
import { withTimeout } from '#libs/common/timeout.js';
import type { JobExecutor } from '../job-executor.js';
import type { JobRepository } from '../job.repository.js';
import type { JobSweeper } from '../job-sweeper.js';
import type { Job } from '../job.types.js';
import { sweepIntervalMs, ThrottledLog } from './driver-support.js';
import type { QueueDriver } from './queue-driver.js';

/** The BullMQ queue name; QUEUE_PREFIX namespaces it in Redis. */
export const BULLMQ_QUEUE_NAME = 'jobs';

/** Queued rows due this long ago and not yet taken are re-added to BullMQ (it may have lost them). */
const RESYNC_AFTER_SECONDS = 5;
const RESYNC_BATCH = 200;

interface DeliveredJob {
  /** The `jobs` row id. */
  id: string;
}

/**
 * One BullMQ delivery per queued state of a row: the run_after of that state tells a retry or
 * a requeue from the first delivery, and re-adding the same state is a no-op (same jobId).
 */
export function bullJobId(job: Pick<Job, 'id' | 'runAfter'>): string {
  return `${job.id}.${job.runAfter.getTime()}`;
}

/** BullMQ runs lower numbers first; our priority runs higher numbers first. */
export function bullPriority(priority: number): number {
  return Math.min(2_097_152, Math.max(1, 1_000_000 - priority));
}

/**
 * Delivers job ids through Redis so workers scale out as processes. A delivery only says
 * "try this id": the worker claims the row in the database and skips it when it is not
 * claimable, so duplicate or stale deliveries are harmless. The sweeper re-adds queued rows
 * that Redis lost (a flush, a failover, a crash between commit and add).
 */
export class BullMqDriver implements QueueDriver {
  readonly kind = 'bullmq' as const;
  private readonly logger = new Logger('Queue');
  private readonly redisErrors = new ThrottledLog(this.logger);
  private readonly connection: Redis;
  private readonly probeConnection: Redis;
  private readonly queue: Queue;
  private worker?: Worker;
  private sweepTimer?: NodeJS.Timeout;
  private sweeping = false;
  private stopped = false;
  private stopping?: Promise<void>;

  constructor(
    private readonly config: AppConfig,
    private readonly repo: JobRepository,
    private readonly executor: JobExecutor,
    private readonly sweeper: JobSweeper,
  ) {
    const url = config.env.REDIS_URL as string;
    // BullMQ needs maxRetriesPerRequest: null on connections that block (the Worker's). A short
    // disconnectTimeout keeps a connection that never came up from holding the process at exit.
    this.connection = new Redis(url, {
      maxRetriesPerRequest: null,
      disconnectTimeout: 500,
      connectionName: `ews:${executor.identity.workerId}`,
    });
    this.connection.on('error', (err) => this.redisErrors.warn(`Redis: ${err.message}`));
    // The probe fails fast instead of queueing commands while Redis is away.
    this.probeConnection = new Redis(url, {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      disconnectTimeout: 500,
      connectionName: `ews-probe:${executor.identity.workerId}`,
    });
    this.probeConnection.on('error', () => undefined);
    this.queue = new Queue(BULLMQ_QUEUE_NAME, {
      connection: this.connection,
      prefix: config.env.QUEUE_PREFIX,
      defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
    });
    this.queue.on('error', (err) => this.redisErrors.warn(`BullMQ queue: ${err.message}`));
  }

  dispatch(jobs: Array<Pick<Job, 'id' | 'type' | 'runAfter' | 'priority'>>): void {
    if (this.stopped) return;
    for (const job of jobs) {
      this.add(job).catch((err) =>
        this.redisErrors.warn(`could not hand job ${job.id} to BullMQ (the sweeper will): ${err.message}`),
      );
    }
  }

  private async add(job: Pick<Job, 'id' | 'type' | 'runAfter' | 'priority'>): Promise<void> {
    const data: DeliveredJob = { id: job.id };
    await this.queue.add(job.type, data, {
      jobId: bullJobId(job),
      delay: Math.max(0, job.runAfter.getTime() - Date.now()),
      priority: bullPriority(job.priority),
    });
  }

  async startWorkers(): Promise<void> {
    if (this.worker || this.stopped) return;
    this.worker = new Worker<DeliveredJob>(BULLMQ_QUEUE_NAME, (delivered) => this.process(delivered), {
      connection: this.connection,
      prefix: this.config.env.QUEUE_PREFIX,
      concurrency: this.config.env.QUEUE_CONCURRENCY,
      lockDuration: this.config.env.JOB_LEASE_SECONDS * 1000,
      name: this.executor.identity.workerId,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
    });
    this.worker.on('error', (err) => this.redisErrors.warn(`BullMQ worker: ${err.message}`));
    this.sweepTimer = setInterval(() => void this.sweep(), sweepIntervalMs(this.config.env.JOB_LEASE_SECONDS));
    this.sweepTimer.unref();
    void this.sweep();
    this.logger.log(
      `BullMQ workers started (${this.executor.identity.workerId}, concurrency ${this.config.env.QUEUE_CONCURRENCY}, prefix ${this.config.env.QUEUE_PREFIX})`,
    );
  }

  /** A delivery: claim the row (skip when it is not claimable) and run it like any driver. */
  private async process(delivered: BullJob<DeliveredJob>): Promise<{ claimed: boolean }> {
    const claimed = await this.executor.claimById(delivered.data.id);
    if (!claimed) return { claimed: false };
    const outcome = await claimed.finished;
    if (outcome.job?.status === 'queued') await this.add(outcome.job);
    return { claimed: true };
  }

  /** Idempotent: a second caller (the shutdown sequence, then the module hook) awaits the same stop. */
  stop(): Promise<void> {
    return (this.stopping ??= this.shutdown());
  }

  private async shutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweepTimer);
    // Stop fetching; BullMQ's close waits for the processors, which end when their handler
    // finishes or the executor hands the job back after the grace period.
    const closing = this.worker?.close().catch((err) => this.logger.warn(`BullMQ worker close: ${err.message}`));
    const released = await this.executor.shutdown(this.config.env.QUEUE_SHUTDOWN_GRACE_SECONDS * 1000);
    if (closing)
      await withTimeout(closing, 5000, 'BullMQ worker did not close within 5 s').catch((err) =>
        this.logger.warn(err.message),
      );
    // Hand the released jobs to the other workers now rather than at the next resync.
    await withTimeout(
      Promise.all(released.map((job) => this.add(job))),
      2000,
      'Redis did not take the released jobs within 2 s',
    ).catch((err) => this.logger.warn(`${err.message}; the sweeper of another worker re-adds them`));
    await withTimeout(this.queue.close(), 2000, 'BullMQ queue did not close within 2 s').catch(() => undefined);
    await withTimeout(this.connection.quit(), 2000, 'Redis did not close within 2 s').catch(() =>
      this.connection.disconnect(),
    );
    this.probeConnection.disconnect();
  }

  async probe(): Promise<void> {
    const answer = await withTimeout(this.probeConnection.ping(), 2000, 'Redis did not answer PING within 2 s');
    if (answer !== 'PONG') throw new Error(`Redis answered PING with ${answer}`);
  }

  private async sweep(): Promise<void> {
    if (this.sweeping || this.stopped) return;
    this.sweeping = true;
    try {
      const requeued = await this.sweeper.sweep();
      for (const job of requeued) await this.add(job);
      const overdue = await this.repo.overdueQueued(RESYNC_AFTER_SECONDS, RESYNC_BATCH);
      for (const job of overdue) await this.add(job);
    } catch (err) {
      this.redisErrors.warn(`sweep failed: ${(err as Error).message}`);
    } finally {
      this.sweeping = false;
    }
  }
}
