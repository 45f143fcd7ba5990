/** Anything JSON can carry: payloads, progress and results are stored as jsonb. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Why the last attempt (or the job) failed; kept on the record. */
export interface JobError {
  message: string;
  /** A stable reason: the handler's error code, or `worker_lost`, `unknown_job_type`, `cancelled`. */
  code?: string;
  /** The attempt this error belongs to. */
  attempts: number;
  /** RFC 3339 time of the failure. */
  at: string;
  /** The worker that was lost (for `worker_lost`). */
  worker?: string;
}

/** One durable job record (a row of `jobs`), as the queue hands it out. */
export interface Job<P = JsonObject, R = JsonValue> {
  id: string;
  type: string;
  status: JobStatus;
  workspaceId: string | null;
  payload: P;
  priority: number;
  /** Attempts started so far (the running one included). */
  attempts: number;
  maxAttempts: number;
  /** Not claimed before this time (retry backoff, delayed jobs). */
  runAfter: Date;
  /** The claim token of the worker holding (or that last held) the job. */
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  progress: JsonObject | null;
  result: R | null;
  error: JobError | null;
  idempotencyKey: string | null;
  targetType: string | null;
  targetId: string | null;
  createdBy: string | null;
  cancelRequestedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** When the current (or last) attempt started. */
  startedAt: Date | null;
  finishedAt: Date | null;
}

export const TERMINAL_STATUSES: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];

export function isTerminal(status: JobStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/**
 * Every job type and its payload. Each family declares its own in its `<family>.jobs.ts` by
 * augmenting this interface (`declare module '…/libs/queue/job.types.js'`), so the `*.jobs.ts`
 * files list what runs in the background, and the compiler checks every
 * enqueue, handler and settled listener against the payload declared for its type.
 */
export interface JobPayloads {}

/** A declared job type. */
export type JobType = keyof JobPayloads & string;

/** A job of one declared type: its payload as declared, its `type` that literal. */
export type JobOf<T extends JobType> = Job<JobPayloads[T]> & { type: T };

/** What a family asks the queue to run. */
export interface EnqueueJob<T extends JobType = JobType> {
  /** The handler's type, e.g. `clusters.run` (a `@JobHandler('clusters.run')` method runs it). */
  type: T;
  payload: JobPayloads[T];
  /** The tenant; put it on every job that touches workspace data. */
  workspaceId?: string | null;
  /** The record this job works for (e.g. `run`, its id): the family's queue views list by it. */
  targetType?: string | null;
  targetId?: string | null;
  /** Enqueueing the same (type, key) again returns the existing job instead of a new one. */
  idempotencyKey?: string | null;
  /** Attempts before the job fails for good; default: the handler's option, else JOB_MAX_ATTEMPTS. */
  maxAttempts?: number;
  /** Higher runs first (default 0). */
  priority?: number;
  /** Do not start before this time. */
  runAfter?: Date;
  /** The user who asked for the work. */
  createdBy?: string | null;
}

export interface EnqueueResult<T extends JobType = JobType> {
  job: JobOf<T>;
  /** False when an idempotency key matched an existing job (nothing new was queued). */
  created: boolean;
}

/** What the handler of jobs of type `T` receives. */
export interface JobContext<T extends JobType = JobType> {
  /** The job as claimed: `attempts` is this attempt's number (1 for the first). */
  job: JobOf<T>;
  payload: JobPayloads[T];
  /**
   * Aborted when the job is cancelled, when this worker lost its lease, or when the process
   * shuts down and the grace period ran out; `signal.reason` is a {@link JobInterrupted}.
   * Pass it to fetch/streams, or check `signal.throwIfAborted()` between steps.
   */
  signal: AbortSignal;
  /** Records progress on the job (visible to pollers); rejects when the lease was lost. */
  progress(progress: JsonObject): Promise<void>;
}

export type JobHandlerFunction = (ctx: JobContext) => Promise<unknown>;

/** Filters for queue views (e.g. GET /runs/queue). */
export interface JobFilter {
  workspaceId?: string;
  type?: string | string[];
  status?: JobStatus | JobStatus[];
  targetType?: string;
  targetId?: string;
}

/** Why a running handler's signal was aborted. */
export type InterruptionReason = 'cancelled' | 'lease_lost' | 'shutdown';

export class JobInterrupted extends Error {
  constructor(
    readonly reason: InterruptionReason,
    message: string,
  ) {
    super(message);
    this.name = 'JobInterrupted';
  }
}
