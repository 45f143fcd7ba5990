import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { JOB_STATUSES, type JobStatus } from '../job.types.js';
import { EXAMPLE_AT, EXAMPLE_ID } from '#libs/common/openapi-examples.js';

/** Why a job (or its last attempt) failed. */
export class JobErrorResponse {
  @ApiProperty({ example: 'The worker stopped answering during the attempt' })
  message: string;
  /** Stable reason: the handler's code, or `worker_lost`, `unknown_job_type`, `cancelled` */
  @ApiPropertyOptional({ example: 'worker_lost' })
  code?: string;
  /** The attempt the error belongs to */
  @ApiProperty({ example: 1 })
  attempts: number;
  @ApiProperty({ format: 'date-time', example: EXAMPLE_AT.started })
  at: string;
  /** The worker that was lost (for `worker_lost`) */
  @ApiPropertyOptional({ example: 'worker-7f9c' })
  worker?: string;
}

/**
 * The state of one durable job, for families that show their jobs (queue views, a record's
 * `job` member). Built by `toJobResponse(job)`; the payload stays internal.
 */
export class JobResponse {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.job })
  id: string;
  /** The handler's type, e.g. `cluster.run` */
  @ApiProperty({ example: 'runs.execute' })
  type: string;
  @ApiProperty({ enum: JOB_STATUSES, example: 'succeeded' })
  status: JobStatus;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, example: EXAMPLE_ID.workspace })
  workspace_id: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The kind of record the job works for, e.g. `run`',
    example: 'run',
  })
  target_type: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, example: EXAMPLE_ID.run })
  target_id: string | null;
  /** Attempts started so far */
  @ApiProperty({ example: 1 })
  attempts: number;
  @ApiProperty({ example: 5 })
  max_attempts: number;
  @ApiProperty({ example: 0 })
  priority: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'The latest progress the handler reported',
    example: { completed: 212, total: 214 },
  })
  progress: Record<string, unknown> | null;
  @ApiProperty({
    nullable: true,
    description: 'What the handler returned (any JSON value), once succeeded',
    example: { state: 'succeeded' },
  })
  result: unknown;
  @ApiProperty({
    type: JobErrorResponse,
    nullable: true,
    description: 'Why the job (or its last attempt) failed',
    example: null,
  })
  error: JobErrorResponse | null;
  /** Not started before this time (retry backoff) */
  @ApiProperty({ example: EXAMPLE_AT.created })
  run_after: Date;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  cancel_requested_at: Date | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When the current (or last) attempt started',
    example: EXAMPLE_AT.started,
  })
  started_at: Date | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: EXAMPLE_AT.finished })
  finished_at: Date | null;
}
