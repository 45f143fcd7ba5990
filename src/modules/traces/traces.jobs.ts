/** The traces family's background work: its job types and their payloads. */

/** Lands an uploaded file, a connection's spans or inline records into a trace dataset (an ingest run). */
export const TRACE_LAND_JOB = 'traces.land';
/** Computes the per-trace enrichment of a trace dataset version (an enrichment run). */
export const TRACE_ENRICH_JOB = 'traces.enrich';
/** Moves a dataset's acknowledged OTLP spans from its inbox into its open head version. */
export const TRACE_LIVE_LAND_JOB = 'traces.live-land';
/** Seals a dataset's open head version when its window ends. */
export const TRACE_LIVE_SEAL_JOB = 'traces.live-seal';
/** Finishes a sealed head outside the landing's locks: its statistics and content hash, then its enrichment. */
export const TRACE_LIVE_SEALED_JOB = 'traces.live-sealed';
/** Deletes trace data older than its retention (hourly, and on demand). */
export const TRACE_RETENTION_JOB = 'traces.retention-sweep';

declare module '#libs/queue/job.types.js' {
  interface JobPayloads {
    [TRACE_LAND_JOB]: { ingest_run_id: string };
    [TRACE_ENRICH_JOB]: { enrichment_run_id: string };
    [TRACE_LIVE_LAND_JOB]: { dataset_id: string };
    [TRACE_LIVE_SEAL_JOB]: { dataset_id: string; version_id: string };
    [TRACE_LIVE_SEALED_JOB]: { dataset_id: string; version_id: string };
    [TRACE_RETENTION_JOB]: Record<string, never>;
  }
}
