import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '#libs/config/app-config.js';
import { requestContext } from '#libs/common/request-context.js';
import { ThrottledLog } from './drivers/driver-support.js';
import { JobHandlerRegistry } from './job-handler.registry.js';
import { decideAfterError, JobFailure } from './job-outcome.js';
import { JobRepository, type JobUpdate } from './job.repository.js';
import {
  type InterruptionReason,
  type Job,
  type JobContext,
  JobInterrupted,
  type JsonObject,
  type JsonValue,
} from './job.types.js';
import { trackedIdOf } from './tracked-job.js';
import { TrackedRecords } from './tracked-records.service.js';
import { WorkerIdentity } from './worker-identity.js';

/** How often this process looks for cancellation requests of the jobs it runs. */
const CANCEL_WATCH_MS = 1000;
/** After a shutdown abort, how long handlers get to wind down before the process moves on. */
const ABORTED_HANDLER_SETTLE_MS = 1000;

/** Waits until every promise settled, or `ms` passed. */
async function settleWithin(promises: Array<Promise<unknown>>, ms: number): Promise<void> {
  if (!promises.length) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(promises), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

interface ActiveJob {
  job: Job;
  token: string;
  controller: AbortController;
  heartbeat?: NodeJS.Timeout;
  beating: boolean;
  leaseLost: boolean;
  /** Set on shutdown once the lease was handed back: the handler's outcome no longer counts. */
  detached: boolean;
  detach: () => void;
  /** The handler's own promise (settles when the handler returns or throws). */
  ran?: Promise<unknown>;
  done: Promise<ExecutionOutcome>;
}

export interface ExecutionOutcome {
  /** The job after this attempt, or null when the attempt no longer held the lease. */
  job: Job | null;
}

type HandlerOutcome = { ok: true; value: JsonValue } | { ok: false; error: unknown };

/**
 * Runs claimed jobs, whichever driver delivered them: keeps the lease alive, turns a
 * cancellation request into an aborted signal, and records the outcome only while the lease
 * is still held (at most one completion per job).
 */
@Injectable()
export class JobExecutor {
  private readonly logger = new Logger('Queue');
  private readonly databaseErrors = new ThrottledLog(this.logger);
  readonly identity = new WorkerIdentity();
  private readonly active = new Map<string, ActiveJob>();
  private cancelWatch?: NodeJS.Timeout;
  private watching = false;
  private closing = false;
  private readonly claims = new Set<Promise<unknown>>();

  constructor(
    private readonly config: AppConfig,
    private readonly repo: JobRepository,
    private readonly registry: JobHandlerRegistry,
    private readonly tracked: TrackedRecords,
  ) {}

  get leaseSeconds(): number {
    return this.config.env.JOB_LEASE_SECONDS;
  }

  get activeCount(): number {
    return this.active.size;
  }

  /** The attempts running in this process. */
  running(): Array<{ id: string; type: string; started_ms_ago: number }> {
    const now = Date.now();
    return [...this.active.values()].map(({ job }) => ({
      id: job.id,
      type: job.type,
      started_ms_ago: job.startedAt ? now - job.startedAt.getTime() : 0,
    }));
  }

  /** Claims the next due job and starts it; null when none is due (or the executor is closing). */
  claimNext(): Promise<{ finished: Promise<ExecutionOutcome> } | null> {
    return this.claim((token) => this.repo.claimNext(token, this.leaseSeconds));
  }

  /** Claims this job when it is queued and due, and starts it; null when it is not claimable. */
  claimById(id: string): Promise<{ finished: Promise<ExecutionOutcome> } | null> {
    return this.claim((token) => this.repo.claimById(id, token, this.leaseSeconds));
  }

  private claim(
    query: (token: string) => Promise<Job | null>,
  ): Promise<{ finished: Promise<ExecutionOutcome> } | null> {
    if (this.closing) return Promise.resolve(null);
    const claiming = (async () => {
      const token = this.identity.nextClaimToken();
      const job = await query(token);
      if (!job) return null;
      if (this.closing) {
        // The claim landed after shutdown began (it waited for a connection): hand the job back unstarted.
        await this.repo
          .release([job.id], [token])
          .catch((err) =>
            this.logger.warn(
              `shutdown: could not hand back job ${job.id} claimed while stopping: ${(err as Error).message}`,
            ),
          );
        return null;
      }
      return { finished: this.start(job, token) };
    })();
    // Shutdown waits for claims in flight, so a job claimed meanwhile is not left behind.
    this.claims.add(claiming);
    void claiming.catch(() => undefined).finally(() => this.claims.delete(claiming));
    return claiming;
  }

  /** Aborts this process's running attempts of the job (a cancel made here). */
  abortLocal(jobId: string, reason: InterruptionReason, message: string): void {
    for (const entry of this.active.values()) {
      if (entry.job.id === jobId) this.abort(entry, reason, message);
    }
  }

  /**
   * Waits up to `graceMs` for running handlers, then aborts the rest (reason `shutdown`) and
   * hands their jobs back to the queue. Returns the jobs handed back.
   */
  async shutdown(graceMs: number): Promise<Job[]> {
    this.closing = true;
    const graceEnds = Date.now() + graceMs;
    // The grace counts from now: a claim waiting for a connection (the embedded database has one,
    // which a running job may hold) must not postpone it. A claim landing later hands its job back.
    await settleWithin([...this.claims], graceMs);
    const running = [...this.active.values()];
    if (running.length) {
      await settleWithin(
        running.map((entry) => entry.done),
        Math.max(0, graceEnds - Date.now()),
      );
    }
    const unfinished = [...this.active.values()];
    this.stopCancelWatch();
    if (!unfinished.length) return [];
    for (const entry of unfinished) {
      entry.detached = true;
      clearInterval(entry.heartbeat);
      this.abort(entry, 'shutdown', 'the worker is shutting down; the job goes back to the queue');
    }
    let released: Job[] = [];
    try {
      released = await this.repo.release(
        unfinished.map((e) => e.job.id),
        unfinished.map((e) => e.token),
      );
      this.logger.warn(
        `shutdown: handed ${released.length} unfinished job(s) back to the queue: ${released.map((j) => `${j.type} ${j.id}`).join(', ')}`,
      );
    } catch (err) {
      this.logger.error(
        `shutdown: could not hand unfinished jobs back (their leases will expire): ${(err as Error).message}`,
      );
    }
    for (const entry of unfinished) {
      entry.detach();
      this.active.delete(entry.token);
    }
    // A moment for handlers that honour the signal to clean up (and late claims to hand back) while the database is open.
    await settleWithin(
      [...unfinished.map((e) => e.ran).filter((p): p is Promise<unknown> => !!p), ...this.claims],
      ABORTED_HANDLER_SETTLE_MS,
    );
    return released;
  }

  private start(job: Job, token: string): Promise<ExecutionOutcome> {
    let detach: () => void = () => undefined;
    const detachedSignal = new Promise<void>((resolve) => (detach = resolve));
    const entry = {
      job,
      token,
      controller: new AbortController(),
      beating: false,
      leaseLost: false,
      detached: false,
      detach,
    } as ActiveJob;
    this.active.set(token, entry);
    entry.heartbeat = setInterval(() => void this.beat(entry), Math.max(500, (this.leaseSeconds * 1000) / 3));
    entry.heartbeat.unref();
    this.ensureCancelWatch();
    entry.done = this.execute(entry, detachedSignal);
    return entry.done;
  }

  private async execute(entry: ActiveJob, detachedSignal: Promise<void>): Promise<ExecutionOutcome> {
    const { job, token } = entry;
    const started = Date.now();
    this.logger.debug(`job ${job.type} ${job.id} attempt ${job.attempts}/${job.maxAttempts} started (${token})`);
    try {
      const handler = this.registry.handler(job.type);
      let outcome: HandlerOutcome;
      if (!handler) {
        outcome = {
          ok: false,
          error: new JobFailure(`no handler is registered for job type "${job.type}"`, {
            code: 'unknown_job_type',
            retry: false,
          }),
        };
      } else {
        const ran = this.invoke(handler.run, entry);
        entry.ran = ran;
        await Promise.race([ran.then(() => undefined), detachedSignal]);
        if (entry.detached) return { job: null };
        outcome = await ran;
      }
      clearInterval(entry.heartbeat);
      if (entry.detached) return { job: null };
      if (entry.leaseLost) {
        this.logger.warn(
          `job ${job.type} ${job.id} attempt ${job.attempts}: the lease was lost; its outcome is discarded`,
        );
        return { job: null };
      }
      const settled = await this.repo.settle(
        job.id,
        token,
        (current): JobUpdate =>
          outcome.ok
            ? { status: 'succeeded', result: outcome.value }
            : decideAfterError(current, outcome.error, {
                now: new Date(),
                retryBaseMs: this.config.env.JOB_RETRY_DELAY_MS,
              }),
        this.registry.settledListeners(job.type),
        (err) =>
          this.logger.error(
            `job ${job.type} ${job.id}: an @OnJobSettled listener failed: ${(err as Error)?.stack ?? err}`,
          ),
      );
      this.logOutcome(job, settled, Date.now() - started);
      return { job: settled };
    } catch (err) {
      // The database did not take the outcome: the lease expires and the sweeper takes over.
      this.logger.error(`job ${job.type} ${job.id}: could not record the outcome: ${(err as Error)?.stack ?? err}`);
      return { job: null };
    } finally {
      clearInterval(entry.heartbeat);
      this.active.delete(token);
      if (!this.active.size) this.stopCancelWatch();
    }
  }

  private async invoke(run: (ctx: JobContext) => unknown, entry: ActiveJob): Promise<HandlerOutcome> {
    const { job, token } = entry;
    const record = this.registry.tracking(job.type);
    // The handler registered for this job's type: its payload is that type's (the queue stored what the compiler checked at enqueue).
    const ctx: JobContext = {
      job: job as JobContext['job'],
      payload: job.payload as JobContext['payload'],
      signal: entry.controller.signal,
      progress: async (progress: JsonObject) => {
        if (entry.detached || entry.leaseLost)
          throw entry.controller.signal.reason ?? new JobInterrupted('lease_lost', 'the lease was lost');
        const held = await this.repo.saveProgress(job.id, token, progress);
        if (!held) {
          this.markLeaseLost(entry);
          throw entry.controller.signal.reason;
        }
        if (record) await this.tracked.progress(record, trackedIdOf(record, job), progress);
      },
    };
    try {
      const value = await requestContext.run(
        { requestId: `job:${job.id}`, userId: job.createdBy ?? undefined, background: true },
        async () => {
          if (record) await this.tracked.start(record, trackedIdOf(record, job));
          return run(ctx);
        },
      );
      return { ok: true, value: toJsonResult(value) };
    } catch (error) {
      return { ok: false, error };
    }
  }

  private async beat(entry: ActiveJob): Promise<void> {
    if (entry.beating || entry.detached || entry.leaseLost) return;
    entry.beating = true;
    try {
      const lease = await this.repo.heartbeat(entry.job.id, entry.token, this.leaseSeconds);
      if (!lease) this.markLeaseLost(entry);
      else if (lease.cancelRequested) this.abort(entry, 'cancelled', 'the job was cancelled');
    } catch (err) {
      this.databaseErrors.warn(
        `job ${entry.job.type} ${entry.job.id}: heartbeat failed (${(err as Error).message}); retrying`,
      );
    } finally {
      entry.beating = false;
    }
  }

  private markLeaseLost(entry: ActiveJob): void {
    if (entry.leaseLost) return;
    entry.leaseLost = true;
    clearInterval(entry.heartbeat);
    this.abort(entry, 'lease_lost', 'this worker lost the lease (it expired and the job was taken back)');
  }

  private abort(entry: ActiveJob, reason: InterruptionReason, message: string): void {
    if (!entry.controller.signal.aborted) entry.controller.abort(new JobInterrupted(reason, message));
  }

  private ensureCancelWatch(): void {
    if (this.cancelWatch) return;
    this.cancelWatch = setInterval(() => void this.watchCancellations(), CANCEL_WATCH_MS);
    this.cancelWatch.unref();
  }

  private stopCancelWatch(): void {
    clearInterval(this.cancelWatch);
    this.cancelWatch = undefined;
  }

  private async watchCancellations(): Promise<void> {
    if (this.watching) return;
    const candidates = [...this.active.values()].filter((e) => !e.controller.signal.aborted);
    if (!candidates.length) return;
    this.watching = true;
    try {
      const requested = new Set(await this.repo.cancelRequested([...new Set(candidates.map((e) => e.job.id))]));
      for (const entry of candidates)
        if (requested.has(entry.job.id)) this.abort(entry, 'cancelled', 'the job was cancelled');
    } catch (err) {
      this.databaseErrors.warn(`could not check for cancellations: ${(err as Error).message}`);
    } finally {
      this.watching = false;
    }
  }

  private logOutcome(job: Job, settled: Job | null, ms: number): void {
    const what = `job ${job.type} ${job.id} attempt ${job.attempts}/${job.maxAttempts}`;
    if (!settled) this.logger.warn(`${what}: the lease was lost before the outcome was recorded; discarded`);
    else if (settled.status === 'succeeded') this.logger.log(`${what} succeeded in ${ms} ms`);
    else if (settled.status === 'queued')
      this.logger.warn(`${what} failed (${settled.error?.message}); retrying at ${settled.runAfter.toISOString()}`);
    else if (settled.status === 'cancelled') this.logger.log(`${what} cancelled`);
    else this.logger.error(`${what} failed for good: ${settled.error?.message}`);
  }
}

/** The handler's return value as stored JSON (undefined is null); a value JSON cannot hold fails the job. */
function toJsonResult(value: unknown): JsonValue {
  if (value === undefined) return null;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new JobFailure(`the handler returned a value that is not JSON: ${(err as Error).message}`, {
      code: 'invalid_result',
      retry: false,
    });
  }
  return text === undefined ? null : (JSON.parse(text) as JsonValue);
}
