/** The ops family's background work: its job types and their payloads. */

/** Checks a custom op's new revision (reachable, answers its contract) and makes it active. */
export const DEPLOY_JOB = 'ops.custom-op-deploy';

declare module '#libs/queue/job.types.js' {
  interface JobPayloads {
    [DEPLOY_JOB]: {
      custom_op_id: string;
      revision: number;
      /** The revision record the check settles. */
      revision_id: string;
    };
  }
}
