import { SetMetadata } from '@nestjs/common';
import type { JobContext, JobOf, JobPayloads, JobType } from './job.types.js';
import type { TrackedRecord } from './tracked-job.js';

export const JOB_HANDLER = 'ews:job-handler';
export const JOB_SETTLED = 'ews:job-settled';

export interface JobHandlerOptions<T extends JobType = JobType> {
  /** Attempts before a job of this type fails for good (default JOB_MAX_ATTEMPTS). */
  maxAttempts?: number;
  /**
   * The record the job settles (`trackedRecord(table, payloadKey)`, the key a member of the
   * type's payload): the queue moves its tracked columns (job id, running, progress, the end and
   * its failure) with the job.
   */
  tracks?: TrackedRecord<keyof JobPayloads[T] & string>;
}

export interface JobHandlerMetadata extends JobHandlerOptions {
  type: string;
}

/** A method that handles jobs of type `T`: it takes their context (or nothing). */
type HandlerMethod<T extends JobType> = (ctx: JobContext<T>) => Promise<unknown>;
/** A method told when jobs of these types end. */
type SettledMethod<T extends JobType> = (job: JobOf<T>) => Promise<void>;

/**
 * Marks a provider method as the handler of one job type. It receives a `JobContext<type>`
 * (`job`, `payload`, `signal`, `progress()`) and returns a JSON result, stored on the job.
 * The same provider runs in the API and in worker processes; exactly one method per type. A
 * method whose context names another type (or another payload) does not compile.
 *
 * ```ts
 * @JobHandler(CLUSTER_JOB, { tracks: CLUSTER_RUNS })
 * async cluster({ payload, signal, progress }: JobContext<typeof CLUSTER_JOB>) { … }
 * ```
 */
export function JobHandler<T extends JobType>(type: T, options: JobHandlerOptions<T> = {}) {
  const metadata = SetMetadata<string, JobHandlerMetadata>(JOB_HANDLER, { type, ...(options as JobHandlerOptions) });
  return <M extends HandlerMethod<T>>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<M>) => {
    metadata(target, key, descriptor);
  };
}

/**
 * Marks a provider method called when a job of these types reaches a terminal state (succeeded,
 * failed or cancelled), with `(job)` inside the unit of work that records the state, after the
 * tracked record's mirror (`tracks`): for what an end means beyond the record's state, e.g.
 * giving back a reserved version or failing a custom op whose check never finished.
 * Runs for every way a job ends, including a worker lost for good or a cancel before it ran.
 * A listener that throws is logged and rolled back alone (a savepoint); the job's state stands.
 */
export function OnJobSettled<T extends JobType>(...types: T[]) {
  return <M extends SettledMethod<T>>(
    _target: object,
    _key: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ) => {
    const method = descriptor.value as object;
    const existing: string[] = Reflect.getMetadata(JOB_SETTLED, method) ?? [];
    Reflect.defineMetadata(JOB_SETTLED, [...existing, ...types], method);
  };
}
