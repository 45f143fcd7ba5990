import { Injectable } from '@nestjs/common';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import type { JudgeValidationResponse } from '../catalogues/dto/judge-validation.dto.js';
import { RunReadService } from '../runs/run-read.service.js';
import { JudgeValidityService, type HumanLabel } from '../runs/validity/judge-validity.service.js';
import type { ValidateJudgeWithQueueRequest } from './dto/review.dto.js';
import { ReviewErrors } from './review.errors.js';
import { ReviewLabelsService } from './review-labels.service.js';
import { ReviewQueuesService } from './review-queues.service.js';

/**
 * A queue's final labels as the human verdicts a run's judge is validated against: each final
 * label's rubric field is the row's verdict, each reviewer's label of it goes along (their
 * agreement is the ceiling a judge can reach), and the runs family records the validation.
 */
@Injectable()
export class ReviewValidationService {
  constructor(
    private readonly queues: ReviewQueuesService,
    private readonly labels: ReviewLabelsService,
    private readonly runs: RunReadService,
    private readonly validity: JudgeValidityService,
  ) {}

  async validateJudge(
    access: WorkspaceAccess,
    queueId: string,
    body: ValidateJudgeWithQueueRequest,
    caller: Principal,
  ): Promise<JudgeValidationResponse> {
    const queue = await this.queues.require(access, queueId);
    const runId = await this.runOf(access, queue.source_kind, queue.source_id, body.run_id);
    const finals = (await this.labels.finalLabels(access.workspaceId, queue.id))!;
    const field = finals.rubric.find((f) => f.name === body.field);
    if (!field || field.type === 'free_text')
      throw new DomainError(
        ReviewErrors.rubric_field_not_rated,
        field
          ? `${body.field} is a free-text field; validate against a pass_fail, categorical or numeric field`
          : `The queue's rubric (version ${finals.rubricVersion}) has no field ${body.field}; it has ${finals.rubric.map((f) => f.name).join(', ')}`,
        { field: body.field },
      );
    const labels: HumanLabel[] = [];
    for (const item of finals.items) {
      const value = item.values[field.name];
      if (value === undefined || value === null || item.reference.rowId === null) continue;
      const reviews = item.reviews.map((r) => r[field.name] ?? null);
      labels.push({ row_id: item.reference.rowId, value, ...(reviews.length > 1 ? { reviews } : {}) });
    }
    if (!labels.length)
      throw new DomainError(
        ReviewErrors.no_final_labels,
        `No item of queue ${queue.name} has a final label of ${field.name} yet`,
        { field: field.name },
      );
    return this.validity.validateFromLabels(
      access,
      runId,
      body.metric,
      labels,
      {
        positive: body.positive,
        dimension: body.by_dimension ?? null,
        confidence: body.confidence,
        seed: body.seed,
        source: { kind: 'review_queue', field: field.name, queue_id: queue.id, rubric_version: finals.rubricVersion },
      },
      caller,
    );
  }

  /** The run judged: the queue's own for a run source unless another over its dataset version is named; named for a dataset version. */
  private async runOf(
    access: WorkspaceAccess,
    kind: string,
    sourceId: string,
    named: string | undefined,
  ): Promise<string> {
    if (kind !== 'run' && kind !== 'dataset_version')
      throw sourceInvalid(`A ${kind} queue labels no run rows; validate a judge with a run or dataset-version queue`);
    if (kind === 'run' && (named === undefined || named === sourceId)) return sourceId;
    if (named === undefined) throw sourceInvalid('A dataset-version queue names the run judged over it in run_id');
    const run = await this.runs.find(access.workspaceId, named);
    if (!run) throw new NotFoundError('run', named);
    const versionId = kind === 'run' ? (await this.runs.find(access.workspaceId, sourceId))?.versionId : sourceId;
    if (run.versionId !== versionId)
      throw sourceInvalid(`Run ${run.id} is over another dataset version than the queue's rows`, {
        run_id: run.id,
      });
    return run.id;
  }
}

function sourceInvalid(detail: string, extra?: Record<string, unknown>): DomainError {
  return new DomainError(ReviewErrors.judge_validation_source_invalid, detail, extra);
}
