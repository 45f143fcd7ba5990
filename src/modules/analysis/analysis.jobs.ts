/** The analysis family's background work: its job types and their payloads. */

/** Analyses a dataset version (the kinds the run asked for: statistics, text, annotation agreement…). */
export const ANALYSIS_JOB = 'analysis.run';
/** Clusters a dataset version's embeddings. */
export const CLUSTER_JOB = 'clusters.run';

declare module '#libs/queue/job.types.js' {
  interface JobPayloads {
    [ANALYSIS_JOB]: { run_id: string };
    [CLUSTER_JOB]: { run_id: string };
  }
}
