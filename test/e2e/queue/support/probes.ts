import type { DataSource } from 'typeorm';
import type { JobQueue } from '#libs/queue/job-queue.service.js';
import type { Job, JobStatus } from '#libs/queue/job.types.js';

/** Polls `probe` until it returns a truthy value; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 10_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`,
      );
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export function waitForStatus(
  queue: JobQueue,
  id: string,
  status: JobStatus | JobStatus[],
  timeoutMs = 10_000,
): Promise<Job> {
  const wanted = Array.isArray(status) ? status : [status];
  return waitFor(
    `job ${id} to be ${wanted.join(' or ')}`,
    async () => {
      const job = await queue.get(id);
      return job && wanted.includes(job.status) ? job : null;
    },
    timeoutMs,
  );
}

export interface Invocation {
  job_id: string;
  attempt: number;
  worker: string;
  note: string | null;
}

/** Through the data source, or a test's own transaction (the embedded database's one connection may be held by it). */
export function invocations(dataSource: Pick<DataSource, 'query'>, jobId: string): Promise<Invocation[]> {
  return dataSource.query(
    'SELECT job_id, attempt, worker, note FROM test_job_invocations WHERE job_id = $1 ORDER BY at, attempt',
    [jobId],
  );
}

export async function settledRows(dataSource: DataSource, jobId: string): Promise<string[]> {
  const rows: Array<{ status: string }> = await dataSource.query(
    'SELECT status FROM test_job_settled WHERE job_id = $1 ORDER BY at',
    [jobId],
  );
  return rows.map((r) => r.status);
}
