/** The online evaluation family's background work: its job types and their payloads. */

/** Follows an evaluator's dataset: reads what landed since its cursor, samples, scores what is complete; queues itself again. */
export const ONLINE_FOLLOW_JOB = 'online.follow';
/** Scores an evaluator's traces of a past time range once (a tracked backfill). */
export const ONLINE_BACKFILL_JOB = 'online.backfill';

declare module '#libs/queue/job.types.js' {
  interface JobPayloads {
    [ONLINE_FOLLOW_JOB]: { evaluator_id: string };
    [ONLINE_BACKFILL_JOB]: { backfill_id: string };
  }
}
