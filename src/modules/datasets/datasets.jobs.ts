/** The datasets family's background work: its job types and their payloads. */

/** Merges the row index's pending entries after a bulk write and refreshes the statistics. */
export const MERGE_ROW_INDEX_JOB = 'datasets.merge-row-index';

declare module '#libs/queue/job.types.js' {
  interface JobPayloads {
    /** `rows`: how many the write that queued it wrote. */
    [MERGE_ROW_INDEX_JOB]: { rows: number };
  }
}
