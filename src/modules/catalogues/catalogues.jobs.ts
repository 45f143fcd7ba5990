/** The catalogues family's background work: its job types and their payloads. */

/** Delivers one signed webhook notification, retried with backoff. */
export const DELIVERY_JOB = 'notifications.deliver';

declare module '#libs/queue/job.types.js' {
  interface JobPayloads {
    [DELIVERY_JOB]: { delivery_id: string };
  }
}
