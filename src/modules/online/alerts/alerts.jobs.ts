/** The background work of alerts on online scores: its job type and payload. */

/**
 * Checks one alert rule: reads its two windows, evaluates the drop, moves the alert's state
 * (recording and notifying a firing or a resolution), then queues the rule's next check.
 */
export const ONLINE_ALERT_CHECK_JOB = 'online.alert-check';

declare module '#libs/queue/job.types.js' {
  interface JobPayloads {
    [ONLINE_ALERT_CHECK_JOB]: { rule_id: string };
  }
}
