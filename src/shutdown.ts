import type { INestApplicationContext } from '@nestjs/common';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { HttpDrain } from '#libs/common/http-drain.js';
import { ReadinessRegistry } from '#libs/common/readiness.js';
import { DatabaseShutdown } from '#libs/database/database-shutdown.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import type { Environment } from '#libs/config/environment.js';

/** Past the longer grace, still-busy database work is aborted even if the queue has not stopped (jobs need their grace, 1 s to wind down and the hand-back). */
const ABORT_AFTER_GRACE_S = 2;
/** From the abort point, how long aborting and closing may take before the process exits anyway. */
const DEADLINE_AFTER_ABORT_S = 13;
/** Rounds of aborting: work that was waiting for a connection may take one freed by the round before. */
const ABORT_ROUNDS = 3;

export interface ShutdownBounds {
  requestGraceMs: number;
  jobGraceMs: number;
  /** From the signal: database work still running is aborted. */
  abortAtMs: number;
  /** From the signal: the process exits with code 1, whatever is still pending. */
  deadlineMs: number;
}

export function shutdownBounds(
  env: Pick<Environment, 'SHUTDOWN_GRACE_SECONDS' | 'QUEUE_SHUTDOWN_GRACE_SECONDS'>,
  servesHttp: boolean,
): ShutdownBounds {
  const requests = servesHttp ? env.SHUTDOWN_GRACE_SECONDS : 0;
  const abortAt = Math.max(requests, env.QUEUE_SHUTDOWN_GRACE_SECONDS) + ABORT_AFTER_GRACE_S;
  return {
    requestGraceMs: requests * 1000,
    jobGraceMs: env.QUEUE_SHUTDOWN_GRACE_SECONDS * 1000,
    abortAtMs: abortAt * 1000,
    deadlineMs: (abortAt + DEADLINE_AFTER_ABORT_S) * 1000,
  };
}

export interface ShutdownTarget {
  app: INestApplicationContext;
  /** The API's server and its request drain; absent in the worker process. */
  http?: { server: Server; drain: HttpDrain };
}

/**
 * What SIGTERM and SIGINT do, in the API and in the worker (docs/operations.md, Shutdown):
 * /ready turns 503 and the server stops accepting connections; requests in flight get
 * SHUTDOWN_GRACE_SECONDS and running jobs QUEUE_SHUTDOWN_GRACE_SECONDS, at the same time; then
 * the connections left are closed, database work still running is aborted, the application
 * closes (the embedded database cleanly, its DATA_DIR lock released) and the process exits 0.
 * An unref'd deadline exits with 1, logging what was pending, if anything still hangs.
 */
export class GracefulShutdown {
  private target?: ShutdownTarget;
  private signal?: NodeJS.Signals;
  private startedAt = 0;
  private stage = 'starting';

  private readonly bounds: ShutdownBounds;
  private readonly messages: { stopping: string; stopped: string };

  constructor(
    env: Pick<Environment, 'SHUTDOWN_GRACE_SECONDS' | 'QUEUE_SHUTDOWN_GRACE_SECONDS'>,
    private readonly logger: Logger,
    options: { servesHttp: boolean; messages?: { stopping: string; stopped: string } },
  ) {
    this.bounds = shutdownBounds(env, options.servesHttp);
    this.messages = options.messages ?? { stopping: 'shutting down', stopped: 'stopped' };
  }

  /** Acts on the first SIGTERM or SIGINT; later ones are ignored (npm forwards a terminal's Ctrl-C a second time). */
  listen(): this {
    const onSignal = (signal: NodeJS.Signals) => this.begin(signal);
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    return this;
  }

  /** The application to stop. A signal that came while it was starting is acted on now. */
  attach(target: ShutdownTarget): void {
    this.target = target;
    if (this.signal) void this.run();
  }

  private begin(signal: NodeJS.Signals): void {
    if (this.signal) {
      this.logger.info({ signal, stage: this.stage }, 'already shutting down');
      return;
    }
    this.signal = signal;
    this.startedAt = Date.now();
    // Counted from the signal; unref'd so that it never keeps a finished process alive.
    const deadline = setTimeout(() => this.deadlinePassed(), this.bounds.deadlineMs);
    deadline.unref();
    if (this.target) void this.run();
    else this.logger.info({ signal }, 'signal received while starting; stopping once started');
  }

  private async run(): Promise<void> {
    let code = 0;
    try {
      await this.stop();
    } catch (err) {
      code = 1;
      this.logger.error({ err: (err as Error)?.message, stage: this.stage }, 'failed to stop cleanly');
    }
    process.exit(code);
  }

  private async stop(): Promise<void> {
    const { app, http } = this.target!;
    const bounds = this.bounds;
    const queue = app.get(JobQueue, { strict: false });
    const database = app.get(DatabaseShutdown, { strict: false });
    this.logger.info(
      {
        signal: this.signal,
        request_grace_s: bounds.requestGraceMs / 1000,
        job_grace_s: bounds.jobGraceMs / 1000,
        deadline_s: bounds.deadlineMs / 1000,
        requests_in_flight: http?.drain.pending().length,
        jobs_running: queue.running().length,
      },
      this.messages.stopping,
    );
    app.get(ReadinessRegistry, { strict: false }).beginShutdown();
    this.stage = 'draining';
    // Jobs drain while requests do; the queue module's own hook later awaits this same stop.
    const jobsStopped = queue
      .stopWorkers()
      .catch((err) => this.logger.warn({ err: (err as Error)?.message }, 'the queue did not stop cleanly'));

    if (http) {
      this.stage = 'draining requests';
      const left = await http.drain.drain(http.server, bounds.requestGraceMs);
      if (left.length) {
        this.logger.warn(
          { requests: left },
          `shutdown: ${left.length} request(s) still running after SHUTDOWN_GRACE_SECONDS (${bounds.requestGraceMs / 1000} s); closing their connections`,
        );
      }
      http.drain.closeConnections(http.server);
    }

    this.stage = 'stopping jobs';
    const untilAbort = bounds.abortAtMs - (Date.now() - this.startedAt);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([jobsStopped, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, untilAbort))))]);
    clearTimeout(timer);

    this.stage = 'aborting database work';
    for (let round = 0; round < ABORT_ROUNDS && database.busy().length; round++) await database.abortBusy();

    this.stage = 'closing';
    await app.close();
    this.logger.info({ duration_ms: Date.now() - this.startedAt }, this.messages.stopped);
  }

  private deadlinePassed(): void {
    const pending: Record<string, unknown> = { stage: this.stage };
    try {
      if (this.target) {
        pending.requests = this.target.http?.drain.pending();
        pending.jobs = this.target.app.get(JobQueue, { strict: false }).running();
        pending.database_connections = this.target.app.get(DatabaseShutdown, { strict: false }).busy();
      }
    } catch {
      // the application is half closed: the stage says where it stopped
    }
    this.logger.error(
      pending,
      `shutdown deadline (${this.bounds.deadlineMs / 1000} s) passed; exiting with work pending`,
    );
    process.exit(1);
  }
}
