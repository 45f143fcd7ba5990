import { Injectable, Logger } from '@nestjs/common';
import { JobHandlerRegistry } from './job-handler.registry.js';
import { decideAfterLeaseExpiry } from './job-outcome.js';
import { JobRepository } from './job.repository.js';
import type { Job } from './job.types.js';

const BATCH = 100;

/**
 * Recovers jobs whose worker died: a running job whose lease expired goes back to the queue,
 * or fails ("worker lost") once its attempts are used up, or ends cancelled when that was
 * asked. Every process with workers sweeps; row locks keep two sweepers from doubling up.
 */
@Injectable()
export class JobSweeper {
  private readonly logger = new Logger('Queue');

  constructor(
    private readonly repo: JobRepository,
    private readonly registry: JobHandlerRegistry,
  ) {}

  /** One pass; returns the jobs queued again (the driver dispatches them). */
  async sweep(): Promise<Job[]> {
    const requeued: Job[] = [];
    const expired = await this.repo.expiredLeases(BATCH);
    for (const { id, type } of expired) {
      const job = await this.repo.recoverExpired(
        id,
        (current) => decideAfterLeaseExpiry(current, new Date()),
        this.registry.settledListeners(type),
        (err) =>
          this.logger.error(`job ${type} ${id}: an @OnJobSettled listener failed: ${(err as Error)?.stack ?? err}`),
      );
      if (!job) continue;
      if (job.status === 'queued') {
        requeued.push(job);
        this.logger.warn(`job ${job.type} ${job.id}: ${job.error?.message}`);
      } else {
        this.logger.error(`job ${job.type} ${job.id} ${job.status}: ${job.error?.message}`);
      }
    }
    return requeued;
  }
}
