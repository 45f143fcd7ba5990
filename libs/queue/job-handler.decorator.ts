import { SetMetadata } from '@nestjs/common';
import type { TrackedRecord } from './tracked-job.js';

export const JOB_HANDLER = 'ews:job-handler';
export const JOB_SETTLED = 'ews:job-settled';

export interface JobHandlerOptions {
  /** Attempts before a job of this type fails for good (default JOB_MAX_ATTEMPTS). */
  maxAttempts?: number;
  /**
   * The record the job settles (`trackedRecord(table, payloadKey)`): the queue moves its
   * tracked columns (job id, running, progress, the end and its failure) with the job.
   */
  tracks?: TrackedRecord;
}

export interface JobHandlerMetadata extends JobHandlerOptions {
  type: string;
}

/**
 * Marks a provider method as the handler of one job type. It receives a `JobContext`
 * (`job`, `payload`, `signal`, `progress()`) and returns a JSON result, stored on the job.
 * The same provider runs in the API and in worker processes; exactly one method per type.
 *
 * ```ts
 * @JobHandler('clusters.run', { tracks: CLUSTER_RUNS })
 * async run({ payload, signal, progress }: JobContext<ClusterRunPayload>) { … }
 * ```
 */
export const JobHandler = (type: string, options: JobHandlerOptions = {}): MethodDecorator =>
  SetMetadata<string, JobHandlerMetadata>(JOB_HANDLER, { type, ...options });

/**
 * Marks a provider method called when a job of these types reaches a terminal state (succeeded,
 * failed or cancelled), with `(job)` inside the unit of work that records the state, after the
 * tracked record's mirror (`tracks`): for what an end means beyond the record's state, e.g.
 * giving back a reserved version or failing a custom op whose check never finished.
 * Runs for every way a job ends, including a worker lost for good or a cancel before it ran.
 * A listener that throws is logged and rolled back alone (a savepoint); the job's state stands.
 */
export function OnJobSettled(...types: string[]): MethodDecorator {
  return (_target, _key, descriptor) => {
    const method = descriptor.value as object;
    const existing: string[] = Reflect.getMetadata(JOB_SETTLED, method) ?? [];
    Reflect.defineMetadata(JOB_SETTLED, [...existing, ...types], method);
    return descriptor;
  };
}
