import { ApiProperty } from '@nestjs/swagger';
import { JOB_STATUSES, type JobStatus } from '../job.types.js';

/** Why a job (or its last attempt) failed. */
export class JobErrorResponse {
  message: string;
  /** Stable reason: the handler's code, or `worker_lost`, `unknown_job_type`, `cancelled` */
  code?: string;
  /** The attempt the error belongs to */
  attempts: number;
  @ApiProperty({ format: 'date-time' })
  at: string;
  /** The worker that was lost (for `worker_lost`) */
  worker?: string;
}

/**
 * The state of one durable job, for families that show their jobs (queue views, a record's
 * `job` member). Built by `toJobResponse(job)`; the payload stays internal.
 */
export class JobResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;
  /** The handler's type, e.g. `cluster.run` */
  type: string;
  @ApiProperty({ enum: JOB_STATUSES })
  status: JobStatus;
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  workspace_id: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The kind of record the job works for, e.g. `run`' })
  target_type: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  target_id: string | null;
  /** Attempts started so far */
  attempts: number;
  max_attempts: number;
  priority: number;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'The latest progress the handler reported' })
  progress: Record<string, unknown> | null;
  @ApiProperty({ nullable: true, description: 'What the handler returned (any JSON value), once succeeded' })
  result: unknown;
  @ApiProperty({ type: JobErrorResponse, nullable: true, description: 'Why the job (or its last attempt) failed' })
  error: JobErrorResponse | null;
  /** Not started before this time (retry backoff) */
  run_after: Date;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  cancel_requested_at: Date | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When the current (or last) attempt started' })
  started_at: Date | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  finished_at: Date | null;
}
