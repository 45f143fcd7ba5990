import { JOB_STATE_VOCABULARY } from '#libs/queue/tracked-job.js';
import type { ReviewJudgeRunResponse } from '../dto/review-judging.dto.js';
import type { JudgeRunRow } from './review-judging.repository.js';

/** A judge run as responses show it: its request, its job's state and failure, what it counted. */
export function toJudgeRunResponse(r: JudgeRunRow): ReviewJudgeRunResponse {
  return {
    id: r.id,
    workspace_id: r.workspace_id,
    queue_id: r.queue_id,
    metric_config_id: r.metric_config_id,
    config_name: r.config_name,
    config_version: r.config_version,
    field: r.field,
    rubric_version: r.rubric_version,
    positive: r.positive,
    confidence: r.confidence,
    seed: r.seed,
    state: JOB_STATE_VOCABULARY.show(r.state),
    failure: r.failure && { code: r.failure.code, message: r.failure.message },
    progress: r.progress,
    items: r.items,
    graded: r.graded,
    ungraded: r.ungraded,
    unlabelled: r.unlabelled,
    errors: r.errors,
    validation_id: r.validation_id,
    job_id: r.job_id,
    created_by: r.created_by,
    created_at: r.created_at,
    started_at: r.started_at,
    finished_at: r.finished_at,
  };
}
