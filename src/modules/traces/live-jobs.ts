/** Moves a dataset's acknowledged OTLP spans from its inbox into its open head version. */
export const TRACE_LIVE_LAND_JOB = 'traces.live-land';
/** Seals a dataset's open head version when its window ends. */
export const TRACE_LIVE_SEAL_JOB = 'traces.live-seal';
/** Finishes a sealed head outside the landing's locks: its statistics and content hash, then its enrichment. */
export const TRACE_LIVE_SEALED_JOB = 'traces.live-sealed';
/** Deletes trace data older than its retention (hourly, and on demand). */
export const TRACE_RETENTION_JOB = 'traces.retention-sweep';
