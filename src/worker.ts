import 'reflect-metadata';
import type { DynamicModule, INestApplicationContext, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import { createRootLogger, JsonLogger } from '../libs/common/logger.js';
import { DataDirLockedError } from '../libs/database/embedded-lock.js';
import { JobQueue } from '../libs/queue/job-queue.service.js';
import { AppModule } from './app.module.js';
import { AppConfig } from '../libs/config/app-config.js';
import { ConfigurationError } from '../libs/config/environment.js';
import { GracefulShutdown } from './shutdown.js';

export interface WorkerOptions {
  logger?: Logger;
  /** Extra modules next to the application's (tests register their job handlers this way). */
  modules?: Array<Type | DynamicModule>;
}

/**
 * The worker process: the same modules as the API (so the same `@JobHandler` services), no
 * HTTP listener. It takes jobs when `config.env.RUN_WORKERS` is on.
 */
export async function createWorker(config: AppConfig, options: WorkerOptions = {}): Promise<INestApplicationContext> {
  const logger = options.logger ?? createRootLogger(config.env.LOG_LEVEL);
  return NestFactory.createApplicationContext(AppModule.forRoot(config, options.modules, logger), {
    logger: new JsonLogger(logger),
    abortOnError: false,
  });
}

/**
 * Closes the context on SIGTERM/SIGINT (running jobs get the shutdown grace, database work still
 * running after it is aborted) and exits 0; see GracefulShutdown for the bounds.
 */
export function exitOnSignals(context: INestApplicationContext, config: AppConfig, logger: Logger): void {
  new GracefulShutdown(config.env, logger, {
    servesHttp: false,
    messages: { stopping: 'worker stopping', stopped: 'worker stopped' },
  })
    .listen()
    .attach({ app: context });
}

async function main(): Promise<void> {
  // This process exists to run jobs: RUN_WORKERS=false (meant for the API) does not apply.
  const config = AppConfig.fromEnvironment({ ...process.env, RUN_WORKERS: 'true' });
  if (config.embedded) {
    throw new ConfigurationError(
      'DATABASE_URL: a separate worker process needs PostgreSQL; the embedded database belongs to one process, and `npm start` already runs the workers in-process.',
    );
  }
  const logger = createRootLogger(config.env.LOG_LEVEL);
  const context = await createWorker(config, { logger });
  exitOnSignals(context, config, logger);
  logger.info(
    { queue: config.queueDriver, worker_id: context.get(JobQueue).workerId, concurrency: config.env.QUEUE_CONCURRENCY },
    `worker started (${config.queueDriver} queue)`,
  );
}

function isEntryPoint(): boolean {
  if (!process.argv[1]) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main().catch((err) => {
    if (err instanceof ConfigurationError || err instanceof DataDirLockedError)
      process.stderr.write(`${err.message}\n`);
    else process.stderr.write(`worker failed to start: ${err?.stack ?? err}\n`);
    process.exit(1);
  });
}
