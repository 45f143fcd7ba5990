import type { JobResponse } from './dto/job.dto.js';
import type { Job } from './job.types.js';

export function toJobResponse(job: Job): JobResponse {
  return {
    id: job.id,
    type: job.type,
    status: job.status,
    workspace_id: job.workspaceId,
    target_type: job.targetType,
    target_id: job.targetId,
    attempts: job.attempts,
    max_attempts: job.maxAttempts,
    priority: job.priority,
    progress: job.progress,
    result: job.result,
    error: job.error,
    run_after: job.runAfter,
    cancel_requested_at: job.cancelRequestedAt,
    created_by: job.createdBy,
    created_at: job.createdAt,
    updated_at: job.updatedAt,
    started_at: job.startedAt,
    finished_at: job.finishedAt,
  };
}
