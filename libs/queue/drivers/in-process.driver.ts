import { Logger } from '@nestjs/common';
import type { AppConfig } from '#libs/config/app-config.js';
import { withTimeout } from '#libs/common/timeout.js';
import type { JobExecutor } from '../job-executor.js';
import type { JobRepository } from '../job.repository.js';
import type { JobSweeper } from '../job-sweeper.js';
import type { Job } from '../job.types.js';
import { sweepIntervalMs, ThrottledLog } from './driver-support.js';
import type { QueueDriver } from './queue-driver.js';

/** Longest a timer may wait (setTimeout's limit); later jobs are found by polling. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The embedded-mode driver: workers in this process claim due rows straight from the `jobs`
 * table (`FOR UPDATE SKIP LOCKED`), polling every QUEUE_POLL_INTERVAL_MS and woken at once by
 * enqueues made here. On PostgreSQL, several processes can share the table this way.
 */
export class InProcessDriver implements QueueDriver {
  readonly kind = 'in-process' as const;
  private readonly logger = new Logger('Queue');
  private readonly claimErrors = new ThrottledLog(this.logger);
  private running = false;
  private loop?: Promise<void>;
  private woken = false;
  private wakeUp?: () => void;
  private readonly timers = new Set<NodeJS.Timeout>();
  private sweepTimer?: NodeJS.Timeout;
  private sweeping = false;
  private stopping?: Promise<void>;

  constructor(
    private readonly config: AppConfig,
    private readonly repo: JobRepository,
    private readonly executor: JobExecutor,
    private readonly sweeper: JobSweeper,
  ) {}

  dispatch(jobs: Array<Pick<Job, 'runAfter'>>): void {
    if (!this.running) return; // a process with workers finds them by polling
    for (const job of jobs) {
      const delay = job.runAfter.getTime() - Date.now();
      if (delay <= 0) {
        this.wake();
        continue;
      }
      const timer = setTimeout(
        () => {
          this.timers.delete(timer);
          this.wake();
        },
        Math.min(delay + 5, MAX_TIMER_MS),
      );
      timer.unref();
      this.timers.add(timer);
    }
  }

  async startWorkers(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.loop = this.claimLoop();
    this.sweepTimer = setInterval(() => void this.sweep(), sweepIntervalMs(this.config.env.JOB_LEASE_SECONDS));
    this.sweepTimer.unref();
    void this.sweep();
    this.logger.log(
      `in-process workers started (${this.executor.identity.workerId}, concurrency ${this.config.env.QUEUE_CONCURRENCY})`,
    );
  }

  /** Idempotent: a second caller (the shutdown sequence, then the module hook) awaits the same stop. */
  stop(): Promise<void> {
    return (this.stopping ??= this.shutdown());
  }

  private async shutdown(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.sweepTimer);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.wake();
    // The grace starts now, not when the loop's last claim returns: on the embedded database that
    // claim waits for the one connection, which a running job may hold until it is aborted.
    await Promise.all([this.loop, this.executor.shutdown(this.config.env.QUEUE_SHUTDOWN_GRACE_SECONDS * 1000)]);
  }

  probe(): Promise<void> {
    return withTimeout(this.repo.ping(), 2000, 'the jobs table did not answer within 2 s');
  }

  private wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private idle(ms: number): Promise<void> {
    if (this.woken || !this.running) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    }).finally(() => {
      this.wakeUp = undefined;
      this.woken = false;
    });
  }

  private async claimLoop(): Promise<void> {
    const poll = this.config.env.QUEUE_POLL_INTERVAL_MS;
    while (this.running) {
      if (this.executor.activeCount >= this.config.env.QUEUE_CONCURRENCY) {
        await this.idle(poll);
        continue;
      }
      let claimed: Awaited<ReturnType<JobExecutor['claimNext']>>;
      try {
        claimed = await this.executor.claimNext();
      } catch (err) {
        this.claimErrors.warn(`could not claim jobs: ${(err as Error).message}`);
        await this.idle(poll);
        continue;
      }
      if (!claimed) {
        await this.idle(poll);
        continue;
      }
      void claimed.finished.then((outcome) => {
        if (outcome.job?.status === 'queued') this.dispatch([outcome.job]);
        this.wake();
      });
    }
  }

  private async sweep(): Promise<void> {
    if (this.sweeping || !this.running) return;
    this.sweeping = true;
    try {
      const requeued = await this.sweeper.sweep();
      if (requeued.length) this.dispatch(requeued);
    } catch (err) {
      this.claimErrors.warn(`could not sweep expired leases: ${(err as Error).message}`);
    } finally {
      this.sweeping = false;
    }
  }
}
