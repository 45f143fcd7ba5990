/** The review family's background work: its job types and their payloads. */

/** Applies a judged metric's judge to a queue's finally labelled items and records the validation. */
export const REVIEW_JUDGE_JOB = 'review.judge';

declare module '#libs/queue/job.types.js' {
  interface JobPayloads {
    [REVIEW_JUDGE_JOB]: { judge_run_id: string };
  }
}
