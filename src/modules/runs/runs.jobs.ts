/** The runs family's background work: its job types and their payloads. */

/** Executes a run: calls the SUT for each row and repetition, scores every answer, writes the summary. */
export const RUN_JOB = 'runs.execute';

declare module '#libs/queue/job.types.js' {
  interface JobPayloads {
    [RUN_JOB]: { run_id: string };
  }
}
