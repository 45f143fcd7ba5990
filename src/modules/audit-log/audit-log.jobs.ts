/** The audit log's background work: its job types and their payloads. */

/** Deletes audit events older than their retention (hourly). */
export const AUDIT_RETENTION_JOB = 'audit-log.retention-sweep';

declare module '#libs/queue/job.types.js' {
  interface JobPayloads {
    [AUDIT_RETENTION_JOB]: Record<string, never>;
  }
}
