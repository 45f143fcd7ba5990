import 'reflect-metadata';
import { createRootLogger } from '#libs/common/logger.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { AppConfig } from '#libs/config/app-config.js';
import { createWorker, exitOnSignals, takeWorkerPriority } from '#src/worker.js';
import { TestJobsModule } from './test-jobs.module.js';

/**
 * A worker process for the queue tests: the real `createWorker` plus the test handlers,
 * configured by the environment the test passes. Prints `READY <worker id>` once it takes jobs.
 */
const config = AppConfig.fromEnvironment(process.env);
const logger = createRootLogger(config.env.LOG_LEVEL);
takeWorkerPriority(config, logger);
const context = await createWorker(config, { logger, modules: [TestJobsModule] });
exitOnSignals(context, config, logger);
process.stdout.write(`READY ${context.get(JobQueue).workerId}\n`);
