import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, PageQueryDto, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { AcceptedAt } from '#libs/queue/accepted.decorator.js';
import { ReviewJudgeRunResponse, StartReviewJudgeRunRequest } from '../dto/review-judging.dto.js';
import { QUEUE } from '../review.controller.js';
import { ReviewJudgingService } from './review-judging.service.js';

/** Judge runs of a review queue: a judged metric's judge applied to the finally labelled items, validated against them. */
@ApiTags('review')
@Controller('review-queues')
export class ReviewJudgingController {
  constructor(private readonly judging: ReviewJudgingService) {}

  /** Applies a judged metric config version's judge to the queue's finally labelled items, as a tracked job that records a judge validation (members). */
  @Post(':queue_id/judge-runs')
  @ApiOperation({ operationId: 'startReviewJudgeRun' })
  @WorkspaceRoleRequired('member', QUEUE)
  @AcceptedAt({
    type: ReviewJudgeRunResponse,
    location: (run) => `/review-queues/${run.queue_id}/judge-runs/${run.id}`,
  })
  @ApiUnprocessableEntityResponse({
    type: ProblemResponse,
    description: 'judge_run_metric_invalid, judge_run_field_invalid',
  })
  start(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @Body() body: StartReviewJudgeRunRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ReviewJudgeRunResponse> {
    return this.judging.start(access, id, body, caller);
  }

  /** The queue's judge runs, newest first (viewers). */
  @Get(':queue_id/judge-runs')
  @ApiOperation({ operationId: 'listReviewJudgeRuns' })
  @WorkspaceRoleRequired('viewer', QUEUE)
  @ApiOkResponse({ type: PageOf(ReviewJudgeRunResponse) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<ReviewJudgeRunResponse>> {
    return this.judging.list(access, id, query);
  }

  /** One judge run (viewers): poll it until `succeeded` (then `validation_id` names the validation), `failed` or `cancelled`. The Location of POST …/judge-runs. */
  @Get(':queue_id/judge-runs/:judge_run_id')
  @ApiOperation({ operationId: 'getReviewJudgeRun' })
  @WorkspaceRoleRequired('viewer', QUEUE)
  @ApiOkResponse({ type: ReviewJudgeRunResponse })
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @UuidParam('judge_run_id') runId: string,
  ): Promise<ReviewJudgeRunResponse> {
    return this.judging.get(access, id, runId);
  }

  /** Cancels a queued or running judge run (members): no further judge calls; it ends `cancelled` and records no validation. */
  @Post(':queue_id/judge-runs/:judge_run_id\\:cancel')
  @ApiOperation({ operationId: 'cancelReviewJudgeRun' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', QUEUE)
  @ApiOkResponse({ type: ReviewJudgeRunResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'judge_run_finished' })
  cancel(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @UuidParam('judge_run_id') runId: string,
    @CurrentUser() caller: Principal,
  ): Promise<ReviewJudgeRunResponse> {
    return this.judging.cancel(access, id, runId, caller);
  }
}
