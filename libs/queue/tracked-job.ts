import type { DB, Generated, Json, Timestamp } from '#libs/database/schema.js';
import { identifier } from '#libs/database/record-queries.js';
import { JOB_STATUSES, type Job, type JobStatus, type JsonObject } from './job.types.js';

/**
 * The tracked-job model (docs/architecture.md#background-work): every family record that
 * follows one background operation (an analysis run, an SDG run, a trace landing…) keeps the
 * same columns, in the queue's own state vocabulary, and the queue keeps them current.
 */

/** The states of a tracked record: the job states, so a record can say what its job says. */
export const TRACKED_STATES = JOB_STATUSES;
export type TrackedState = JobStatus;

/** Why a tracked operation failed or was cancelled: one shape for every family. */
export interface TrackedFailure {
  /** A stable reason: the handler's `JobFailure` code, `worker_lost`, `cancelled`, … */
  code: string;
  message: string;
  /** Anything more a family records about the failure. */
  details?: JsonObject;
}

/**
 * The tracked columns as a family reads them (`SELECT *` of its table). `created_at` is when the
 * record was made, with its job, in one transaction: the time it was queued.
 */
export interface TrackedColumns {
  state: TrackedState;
  failure: TrackedFailure | null;
  progress: JsonObject | null;
  job_id: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** The tracked columns' names, for a family's select list of its tracked table (`[...OWN, ...TRACKED_COLUMNS]`). */
export const TRACKED_COLUMNS = [
  'state',
  'failure',
  'progress',
  'job_id',
  'created_at',
  'started_at',
  'finished_at',
] as const satisfies ReadonlyArray<keyof TrackedColumns>;

/** The tracked columns as the schema (libs/database/schema.ts) types them, with the record's id. */
interface TrackedSchemaColumns {
  id: Generated<string>;
  state: Generated<string>;
  failure: Json | null;
  progress: Json | null;
  job_id: string | null;
  created_at: Generated<Timestamp>;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
}

/**
 * The tables a job can settle: those of the schema holding every tracked column, with its type.
 * A registration naming another table, or a table whose tracked column was renamed, does not
 * compile, and the queue's statements over `record.table` are typed by these columns.
 */
export type TrackedTable = { [T in keyof DB]: DB[T] extends TrackedSchemaColumns ? T : never }[keyof DB];

/**
 * Which record a job settles: the family's table holding the tracked columns and the payload
 * member naming the record. Given to `@JobHandler(type, { tracks })`.
 */
export interface TrackedRecord<K extends string = string> {
  readonly table: TrackedTable;
  readonly idKey: K;
}

export function trackedRecord<K extends string>(table: TrackedTable, idKey: K): TrackedRecord<K> {
  identifier(table, 'table');
  return Object.freeze({ table, idKey });
}

/** The id of the record a job of a tracked type works for, from its payload. */
export function trackedIdOf(record: TrackedRecord, job: Pick<Job, 'type' | 'payload'>): string {
  const id = (job.payload as Record<string, unknown>)[record.idKey];
  if (typeof id !== 'string' || !id)
    throw new Error(`job ${job.type}: its payload names no ${record.idKey} (the ${record.table} record it settles)`);
  return id;
}

/** The failure a settled job leaves on its record (null when it succeeded). */
export function failureOfJob(job: Pick<Job, 'status' | 'error'>): TrackedFailure | null {
  if (job.status === 'succeeded') return null;
  return { code: job.error?.code ?? job.status, message: job.error?.message ?? job.status };
}

/** The failure of a thrown value: its `code` when it has one. */
export function failureOf(err: unknown, fallbackCode = 'failed'): TrackedFailure {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return { code: typeof code === 'string' && code ? code : fallbackCode, message: message || fallbackCode };
}

/**
 * An operation's documented states and how the common ones show in them. The responses keep
 * the documented vocabulary (interface contract); the tables keep the common one.
 */
export interface StateVocabulary<D extends string = string> {
  /** The documented states, in the documented order (the OpenAPI enum). */
  readonly states: readonly D[];
  /** How a common state shows. */
  show(state: TrackedState): D;
  /** The common states that show as this documented one (for filters). */
  commonOf(state: D): TrackedState[];
}

export function defineStateVocabulary<const D extends string>(
  states: readonly D[],
  shows: Record<TrackedState, D>,
): StateVocabulary<D> {
  for (const [common, documented] of Object.entries(shows)) {
    if (!states.includes(documented))
      throw new Error(`state vocabulary: ${common} shows as ${documented}, which is not one of ${states.join(', ')}`);
  }
  return Object.freeze({
    states,
    show: (state: TrackedState) => shows[state],
    commonOf: (state: D) => TRACKED_STATES.filter((s) => shows[s] === state),
  });
}

/** The job states as they are: trace landings and enrichments document all five. */
export const JOB_STATE_VOCABULARY = defineStateVocabulary(TRACKED_STATES, {
  queued: 'queued',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
});

/**
 * Operations documented without `cancelled` (analysis, cluster and SDG runs): a cancelled job
 * (no route cancels them; an operator may) shows as `failed`, its reason in the failure.
 */
export const UNCANCELLABLE_VOCABULARY = defineStateVocabulary(['queued', 'running', 'succeeded', 'failed'], {
  queued: 'queued',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'failed',
});
