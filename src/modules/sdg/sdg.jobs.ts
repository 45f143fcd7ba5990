/** The synthetic data family's background work: its job types and their payloads. */

/** Generates a synthetic dataset run's rows. */
export const SDG_JOB = 'sdg.generate';

declare module '#libs/queue/job.types.js' {
  interface JobPayloads {
    [SDG_JOB]: { sdg_run_id: string };
  }
}
