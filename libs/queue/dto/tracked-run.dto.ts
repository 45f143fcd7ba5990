import { ApiProperty } from '@nestjs/swagger';
import { EXAMPLE_AT, EXAMPLE_ID } from '#libs/common/openapi-examples.js';
import type { JsonObject } from '../job.types.js';
import type { StateVocabulary, TrackedColumns, TrackedFailure } from '../tracked-job.js';

/**
 * The members a "run of a background operation" response shows from its tracked record, in the
 * operation's documented vocabulary. Each response lists its own members, in its own order (the
 * committed OpenAPI document fixes both), so they are shared as the decorators and the mapper
 * below rather than as a base class, whose members would come first.
 */
export interface TrackedRunFields<D extends string = string> {
  state: D;
  /** The failure's message, when it failed. */
  state_reason: string | null;
  progress: JsonObject | null;
  job_id: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** The tracked members of a run response, from its record. */
export function trackedRunFields<D extends string, K extends keyof TrackedRunFields<D>>(
  row: TrackedColumns,
  vocabulary: StateVocabulary<D>,
  keys: readonly K[],
): Pick<TrackedRunFields<D>, K> {
  const all: TrackedRunFields<D> = {
    state: vocabulary.show(row.state),
    state_reason: row.failure?.message ?? null,
    progress: row.progress,
    job_id: row.job_id,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
  };
  return Object.fromEntries(keys.map((k) => [k, all[k]])) as Pick<TrackedRunFields<D>, K>;
}

/** A failure for responses that show it whole (`error: {code, message}`, and `details` when there are any). */
export function failureObject(failure: TrackedFailure | null): Record<string, unknown> | null {
  if (!failure) return null;
  return { code: failure.code, message: failure.message, ...(failure.details ? { details: failure.details } : {}) };
}

/** The OpenAPI declarations of those members, one per member. */
export const TrackedRunProperty = {
  state: (vocabulary: StateVocabulary) => ApiProperty({ enum: vocabulary.states, example: 'succeeded' }),
  stateReason: () => ApiProperty({ type: 'string', nullable: true, example: null }),
  progress: () => ApiProperty({ type: 'object', additionalProperties: true, nullable: true, example: null }),
  jobId: () => ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.job }),
  createdAt: () => ApiProperty({ example: EXAMPLE_AT.created }),
  startedAt: () => ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.started }),
  finishedAt: () => ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.finished }),
};
