import type { Job, JobError } from './job.types.js';

/**
 * Throw from a handler to fail the job with a stable code. `retry: false` fails it at once
 * (bad payload, missing record); otherwise the queue retries with backoff like any error.
 */
export class JobFailure extends Error {
  readonly code: string;
  readonly retry: boolean;

  constructor(message: string, options: { code: string; retry?: boolean }) {
    super(message);
    this.name = 'JobFailure';
    this.code = options.code;
    this.retry = options.retry ?? true;
  }
}

const MAX_MESSAGE = 2000;
const MAX_RETRY_DELAY_MS = 10 * 60_000;

/** The error recorded on the job for a thrown value. */
export function toJobError(err: unknown, attempts: number, at: Date, fallbackCode?: string): JobError {
  const message =
    err instanceof Error ? err.message : typeof err === 'string' ? err : (JSON.stringify(err) ?? String(err));
  const rawCode = (err as { code?: unknown } | null)?.code;
  const code = typeof rawCode === 'string' && rawCode.length > 0 ? rawCode : fallbackCode;
  return {
    message: (message || 'the handler failed without a message').slice(0, MAX_MESSAGE),
    ...(code ? { code } : {}),
    attempts,
    at: at.toISOString(),
  };
}

/** Exponential backoff: base, 2×base, 4×base… capped at 10 minutes, plus up to 10 % jitter. */
export function retryDelayMs(attempt: number, baseMs: number, random: () => number = Math.random): number {
  const exponential = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential * (1 + 0.1 * random()));
}

/** Where a running job goes next. */
export type JobTransition =
  /** Back to the queue; claimable again `delayMs` after the database's now(). */
  | { status: 'queued'; delayMs: number; error: JobError }
  | { status: 'failed'; error: JobError }
  | { status: 'cancelled'; error: JobError };

/**
 * After the handler threw: cancelled when cancellation was requested, failed for good when
 * the error says not to retry or the attempts are used up, else queued again after a backoff.
 */
export function decideAfterError(
  job: Pick<Job, 'attempts' | 'maxAttempts' | 'cancelRequestedAt'>,
  err: unknown,
  options: { now: Date; retryBaseMs: number; random?: () => number },
): JobTransition {
  if (job.cancelRequestedAt) {
    return {
      status: 'cancelled',
      error: {
        message: 'cancelled while running',
        code: 'cancelled',
        attempts: job.attempts,
        at: options.now.toISOString(),
      },
    };
  }
  const error = toJobError(err, job.attempts, options.now);
  const permanent = err instanceof JobFailure && !err.retry;
  if (permanent || job.attempts >= job.maxAttempts) return { status: 'failed', error };
  return { status: 'queued', delayMs: retryDelayMs(job.attempts, options.retryBaseMs, options.random), error };
}

/**
 * The sweeper found a running job whose lease expired (its worker died or hung): cancelled if
 * that was requested, failed once its attempts are used up, else queued to run again now.
 */
export function decideAfterLeaseExpiry(
  job: Pick<Job, 'attempts' | 'maxAttempts' | 'cancelRequestedAt' | 'leaseOwner'>,
  now: Date,
): JobTransition {
  const at = now.toISOString();
  if (job.cancelRequestedAt) {
    return {
      status: 'cancelled',
      error: {
        message: 'cancelled; its worker was lost before it stopped',
        code: 'cancelled',
        attempts: job.attempts,
        at,
      },
    };
  }
  const worker = job.leaseOwner ? { worker: job.leaseOwner.split('#')[0] } : {};
  const plural = job.attempts === 1 ? '' : 's';
  if (job.attempts >= job.maxAttempts) {
    return {
      status: 'failed',
      error: {
        message: `worker lost (lease expired) after ${job.attempts} attempt${plural}`,
        code: 'worker_lost',
        attempts: job.attempts,
        at,
        ...worker,
      },
    };
  }
  return {
    status: 'queued',
    delayMs: 0,
    error: {
      message: `worker lost (lease expired) during attempt ${job.attempts}; queued again`,
      code: 'worker_lost',
      attempts: job.attempts,
      at,
      ...worker,
    },
  };
}
