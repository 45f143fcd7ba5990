import 'reflect-metadata';
import type { DynamicModule, INestApplicationContext, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { realpathSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import { createRootLogger, JsonLogger } from '#libs/common/logger.js';
import { DataDirLockedError } from '#libs/database/embedded-lock.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { AppModule } from './app.module.js';
import { AppConfig } from '#libs/config/app-config.js';
import { ConfigurationError } from '#libs/config/environment.js';
import { GracefulShutdown } from './shutdown.js';
import { serveHealth } from './modules/status/health-listener.js';
import { StatusService } from './modules/status/status.service.js';

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

/**
 * Lowers this process's CPU priority to WORKER_NICE (a nice value), so that on a host shared with
 * API processes the requests are served first and the jobs take the CPU they leave: a run is
 * background work, a request has someone waiting. Measured with bench/get-under-run.mjs: at nice
 * 10 a GET's p99 under a run rose far less than at the API's priority, and the run took about as
 * long either way (docs/performance.md#a-get-while-a-run-is-going). Called first, so the threads the
 * process starts afterwards (libuv's pool) inherit it. Raising a priority would need privileges,
 * so a lower WORKER_NICE than the current one is left alone.
 */
export function takeWorkerPriority(config: AppConfig, logger: Logger): void {
  const nice = config.env.WORKER_NICE;
  try {
    if (getPriority() >= nice) return;
    setPriority(nice);
    logger.info({ nice }, 'worker CPU priority lowered (WORKER_NICE)');
  } catch (err) {
    logger.warn({ nice, err: (err as Error).message }, 'worker CPU priority left unchanged');
  }
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
  takeWorkerPriority(config, logger);
  const context = await createWorker(config, { logger });
  exitOnSignals(context, config, logger);
  // Its probes (the API answers them on PORT): the image's HEALTHCHECK, Kubernetes' httpGet.
  const healthPort = config.env.WORKER_HEALTH_PORT;
  if (healthPort) await serveHealth(context.get(StatusService), config.env.HOST, healthPort);
  logger.info(
    {
      queue: config.queueDriver,
      worker_id: context.get(JobQueue).workerId,
      concurrency: config.env.QUEUE_CONCURRENCY,
      ...(healthPort ? { health_port: healthPort } : {}),
    },
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
