import {
  BeforeApplicationShutdown,
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AppConfig } from '#libs/config/app-config.js';
import { ReadinessRegistry } from '#libs/common/readiness.js';
import { InProcessDriver } from './drivers/in-process.driver.js';
import { QUEUE_DRIVER, type QueueDriver } from './drivers/queue-driver.js';
import { JobExecutor } from './job-executor.js';
import { JobHandlerRegistry } from './job-handler.registry.js';
import { JobQueue } from './job-queue.service.js';
import { JobRepository } from './job.repository.js';
import { JobSweeper } from './job-sweeper.js';
import { TrackedRecordRepository } from './tracked-record.repository.js';
import { TrackedRecords } from './tracked-records.service.js';

/**
 * Registers the `queue` readiness probe, starts this process's workers once every module is
 * up (when RUN_WORKERS), and stops them before the database closes.
 */
@Injectable()
class QueueLifecycle implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Queue');

  constructor(
    private readonly config: AppConfig,
    private readonly readiness: ReadinessRegistry,
    @Inject(QUEUE_DRIVER) private readonly driver: QueueDriver,
  ) {}

  onModuleInit(): void {
    this.readiness.register('queue', () => this.driver.probe());
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.env.RUN_WORKERS) await this.driver.startWorkers();
    else
      this.logger.log(
        `workers are off in this process (RUN_WORKERS=false); the ${this.driver.kind} queue only takes jobs`,
      );
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.driver.stop();
  }
}

/**
 * Durable jobs for every 202 start: `JobQueue` to enqueue, `@JobHandler` to run (its `tracks`
 * option keeps the family's record in step with the job, through `TrackedRecords`),
 * `@OnJobSettled` for what else an outcome means. BullMQ delivers when REDIS_URL is set, else the
 * in-process driver polls the `jobs` table. See docs/queue.md.
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [
    JobRepository,
    TrackedRecordRepository,
    TrackedRecords,
    JobHandlerRegistry,
    JobExecutor,
    JobSweeper,
    {
      provide: QUEUE_DRIVER,
      inject: [AppConfig, JobRepository, JobExecutor, JobSweeper],
      // BullMQ and ioredis (some 250 modules) load only when REDIS_URL asks for them.
      useFactory: async (
        config: AppConfig,
        repo: JobRepository,
        executor: JobExecutor,
        sweeper: JobSweeper,
      ): Promise<QueueDriver> =>
        config.queueDriver === 'bullmq'
          ? new (await import('./drivers/bullmq.driver.js')).BullMqDriver(config, repo, executor, sweeper)
          : new InProcessDriver(config, repo, executor, sweeper),
    },
    JobQueue,
    QueueLifecycle,
  ],
  exports: [JobQueue, TrackedRecords],
})
export class QueueModule {}
