import { Body, Controller, Delete, Get, HttpCode, Post, Query, Res } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { type Page, PageOf } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import {
  CreateTraceFeedbackBatchRequest,
  CreateTraceFeedbackRequest,
  TraceFeedbackBatchResponse,
  TraceFeedbackQuery,
  TraceFeedbackResponse,
} from '../dto/feedback.dto.js';
import { TraceFeedbackService } from './feedback.service.js';
import { RateLimitClass } from '#libs/auth/rate-limits.js';

/** The header that marks an answer to a retry: the feedback was already stored under its client_key. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
const FEEDBACK = { resource: 'trace_feedback', param: 'feedback_id' } as const;

/**
 * End users' feedback on traces, posted by the application's backend with the API key it
 * exports traces with. An addition beside the specification.
 */
@ApiTags('traces')
@Controller('traces')
export class FeedbackController {
  constructor(private readonly feedback: TraceFeedbackService) {}

  /**
   * Stores an end user's feedback on a trace (or one of its spans): a thumbs up or down, a score
   * or a category under a name, with a comment and the end user's id. The trace need not have
   * landed yet. With `client_key` the post is safe to retry: the same key and content answers the
   * stored feedback again (200, `Idempotent-Replayed: true`), the same key with other content 409
   * (members; an API key's own workspace, or `workspace_id` with a user's token).
   */
  @Post('feedback')
  @ApiOperation({ operationId: 'createTraceFeedback' })
  @RateLimitClass('ingestion')
  @WorkspaceRoleRequired('member', { apiKeyOrBody: 'workspace_id' })
  @ApiCreatedResponse({ type: TraceFeedbackResponse, description: 'Stored' })
  @ApiOkResponse({
    type: TraceFeedbackResponse,
    description: 'A retry: the feedback its client_key holds, unchanged (`replayed: true`)',
    headers: { [REPLAYED_HEADER]: { description: '`true` on a retry', schema: { type: 'string', enum: ['true'] } } },
  })
  @ApiConflictResponse({
    type: ProblemResponse,
    description: 'trace_feedback_key_conflict: the client_key holds feedback with other content',
  })
  async create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @CurrentUser() caller: Principal,
    @Body() body: CreateTraceFeedbackRequest,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TraceFeedbackResponse> {
    const { feedback, replayed } = await this.feedback.create(access, caller, body);
    if (replayed) res.status(200).setHeader(REPLAYED_HEADER, 'true');
    return feedback;
  }

  /**
   * Stores up to 100 feedbacks, each as POST /traces/feedback would (idempotent by its own
   * client_key), and answers each one's outcome: created, replayed or conflict (members).
   */
  @Post('feedback\\:batch')
  @HttpCode(200)
  @ApiOperation({ operationId: 'createTraceFeedbackBatch' })
  @RateLimitClass('ingestion')
  @WorkspaceRoleRequired('member', { apiKeyOrBody: 'workspace_id' })
  @ApiOkResponse({ type: TraceFeedbackBatchResponse })
  createBatch(
    @CurrentWorkspace() access: WorkspaceAccess,
    @CurrentUser() caller: Principal,
    @Body() body: CreateTraceFeedbackBatchRequest,
  ): Promise<TraceFeedbackBatchResponse> {
    return this.feedback.createBatch(access, caller, body);
  }

  /** The workspace's feedback, newest first, filtered by trace, span, name, value, end user and time (viewers). */
  @Get('feedback')
  @ApiOperation({ operationId: 'listTraceFeedback' })
  @WorkspaceRoleRequired('viewer', { apiKeyOrQuery: 'workspace_id' })
  @ApiOkResponse({ type: PageOf(TraceFeedbackResponse) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: TraceFeedbackQuery,
  ): Promise<Page<TraceFeedbackResponse>> {
    return this.feedback.list(access, query);
  }

  /** One feedback (viewers). */
  @Get('feedback/:feedback_id')
  @ApiOperation({ operationId: 'getTraceFeedback' })
  @WorkspaceRoleRequired('viewer', FEEDBACK)
  @ApiOkResponse({ type: TraceFeedbackResponse })
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('feedback_id') id: string,
  ): Promise<TraceFeedbackResponse> {
    return this.feedback.get(access, id);
  }

  /** Deletes one feedback, recorded in the audit trail; its client_key may be used again (members). */
  @Delete('feedback/:feedback_id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteTraceFeedback' })
  @WorkspaceRoleRequired('member', FEEDBACK)
  @ApiNoContentResponse({ description: 'Deleted' })
  remove(
    @CurrentWorkspace() access: WorkspaceAccess,
    @CurrentUser() caller: Principal,
    @UuidParam('feedback_id') id: string,
  ): Promise<void> {
    return this.feedback.remove(access, caller, id);
  }
}
