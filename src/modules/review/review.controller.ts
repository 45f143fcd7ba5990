import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query, Res } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, PageQueryDto, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import {
  AddReviewItemsRequest,
  AddReviewItemsResponse,
  AdjudicateRequest,
  AgreementQuery,
  AgreementResponse,
  CreateReviewQueueRequest,
  DisagreementResponse,
  FinalLabelResponse,
  LeasedItemResponse,
  ListReviewItemsQuery,
  ListReviewQueuesQuery,
  ReviewExportRequest,
  ReviewExportResponse,
  ReviewItemResponse,
  ReviewLabelResponse,
  ReviewQueueResponse,
  RubricVersionList,
  SkipItemRequest,
  SubmitLabelRequest,
  UpdateReviewQueueRequest,
  ValidateJudgeWithQueueRequest,
} from './dto/review.dto.js';
import { JudgeValidationResponse } from '../catalogues/dto/judge-validation.dto.js';
import { ReviewItemsService } from './review-items.service.js';
import { ReviewLabelsService } from './review-labels.service.js';
import { ReviewQueuesService } from './review-queues.service.js';
import { ReviewValidationService } from './review-validation.service.js';
import { ReviewWorkService } from './review-work.service.js';

export const QUEUE = { resource: 'review_queue', param: 'queue_id' } as const;

@ApiTags('review')
@Controller('review-queues')
export class ReviewController {
  constructor(
    private readonly queues: ReviewQueuesService,
    private readonly items: ReviewItemsService,
    private readonly work: ReviewWorkService,
    private readonly labels: ReviewLabelsService,
    private readonly validation: ReviewValidationService,
  ) {}

  /** The workspace's review queues, newest first (viewers); `state` filters. */
  @Get()
  @ApiOperation({ operationId: 'listReviewQueues' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: PageOf(ReviewQueueResponse) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ListReviewQueuesQuery,
  ): Promise<Page<ReviewQueueResponse>> {
    return this.queues.list(access, query);
  }

  /** Creates a queue with its rubric (version 1), source, overlap, reviewers and lease length (members). */
  @Post()
  @ApiOperation({ operationId: 'createReviewQueue' })
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: ReviewQueueResponse })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateReviewQueueRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ReviewQueueResponse> {
    return this.queues.create(access, body, caller);
  }

  /** One queue with its current rubric and item counts (viewers). */
  @Get(':queue_id')
  @ApiOperation({ operationId: 'getReviewQueue' })
  @WorkspaceRoleRequired('viewer', QUEUE)
  @ApiOkResponse({ type: ReviewQueueResponse })
  get(@CurrentWorkspace() access: WorkspaceAccess, @UuidParam('queue_id') id: string): Promise<ReviewQueueResponse> {
    return this.queues.get(access, id);
  }

  /** Changes a queue (members); a new rubric becomes the next rubric version. */
  @Patch(':queue_id')
  @ApiOperation({ operationId: 'updateReviewQueue' })
  @WorkspaceRoleRequired('member', QUEUE)
  @ApiOkResponse({ type: ReviewQueueResponse })
  update(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @Body() body: UpdateReviewQueueRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ReviewQueueResponse> {
    return this.queues.update(access, id, body, caller);
  }

  /** Deletes a queue with its items and labels (admins). */
  @Delete(':queue_id')
  @ApiOperation({ operationId: 'deleteReviewQueue' })
  @HttpCode(204)
  @WorkspaceRoleRequired('admin', QUEUE)
  @ApiNoContentResponse({ description: 'Deleted' })
  async delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.queues.delete(access, id, caller);
  }

  /** Every rubric version of the queue, oldest first (viewers). */
  @Get(':queue_id/rubric-versions')
  @ApiOperation({ operationId: 'listReviewRubricVersions' })
  @WorkspaceRoleRequired('viewer', QUEUE)
  @ApiOkResponse({ type: RubricVersionList })
  rubricVersions(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
  ): Promise<RubricVersionList> {
    return this.queues.rubricVersions(access, id);
  }

  /** Adds items by a filter (optionally a seeded sample), by ids, or from a run's failures; items the queue has are skipped (members). */
  @Post(':queue_id/items')
  @ApiOperation({ operationId: 'addReviewItems' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', QUEUE)
  @ApiOkResponse({ type: AddReviewItemsResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'queue_closed' })
  addItems(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @Body() body: AddReviewItemsRequest,
    @CurrentUser() caller: Principal,
  ): Promise<AddReviewItemsResponse> {
    return this.items.add(access, id, body, caller);
  }

  /** The queue's items in queue order, with their state and final label, never the reviewers' labels (viewers). */
  @Get(':queue_id/items')
  @ApiOperation({ operationId: 'listReviewItems' })
  @WorkspaceRoleRequired('viewer', QUEUE)
  @ApiOkResponse({ type: PageOf(ReviewItemResponse) })
  listItems(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @Query() query: ListReviewItemsQuery,
  ): Promise<Page<ReviewItemResponse>> {
    return this.queues.items(access, id, query);
  }

  /** The next item for the caller to label, on a lease, with the rubric; 204 when nothing is left for the caller (members on the reviewer list). */
  @Post(':queue_id/items\\:next')
  @ApiOperation({ operationId: 'claimNextReviewItem' })
  @WorkspaceRoleRequired('member', QUEUE)
  @ApiOkResponse({ type: LeasedItemResponse })
  @ApiNoContentResponse({ description: 'No item needs a label from the caller' })
  @ApiForbiddenResponse({ type: ProblemResponse, description: 'not_a_reviewer' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'queue_closed' })
  async next(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @CurrentUser() caller: Principal,
    @Res({ passthrough: true }) res: Response,
  ): Promise<LeasedItemResponse | undefined> {
    const leased = await this.work.next(access, id, caller);
    res.status(leased ? 200 : 204);
    return leased ?? undefined;
  }

  /** Submits the caller's label on an item they hold a lease on (members). */
  @Post(':queue_id/items/:item_id/labels')
  @ApiOperation({ operationId: 'submitReviewLabel' })
  @WorkspaceRoleRequired('member', QUEUE)
  @ApiCreatedResponse({ type: ReviewLabelResponse })
  @ApiUnprocessableEntityResponse({ type: ProblemResponse, description: 'label_invalid' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'no_lease, already_labelled, queue_closed' })
  submit(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @UuidParam('item_id') itemId: string,
    @Body() body: SubmitLabelRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ReviewLabelResponse> {
    return this.work.submit(access, id, itemId, body.values, caller);
  }

  /** Edits the caller's own label; the earlier values stay in its history (members). */
  @Patch(':queue_id/items/:item_id/labels/mine')
  @ApiOperation({ operationId: 'editReviewLabel' })
  @WorkspaceRoleRequired('member', QUEUE)
  @ApiOkResponse({ type: ReviewLabelResponse })
  @ApiUnprocessableEntityResponse({ type: ProblemResponse, description: 'label_invalid' })
  edit(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @UuidParam('item_id') itemId: string,
    @Body() body: SubmitLabelRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ReviewLabelResponse> {
    return this.work.edit(access, id, itemId, body.values, caller);
  }

  /** Skips an item the caller holds, with an optional reason: its slot goes to someone else (members). */
  @Post(':queue_id/items/:item_id\\:skip')
  @ApiOperation({ operationId: 'skipReviewItem' })
  @WorkspaceRoleRequired('member', QUEUE)
  @ApiCreatedResponse({ type: ReviewLabelResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'no_lease, already_labelled' })
  skip(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @UuidParam('item_id') itemId: string,
    @Body() body: SkipItemRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ReviewLabelResponse> {
    return this.work.skip(access, id, itemId, body.reason, caller);
  }

  /** Releases the caller's lease on an item without labelling it (members). */
  @Delete(':queue_id/items/:item_id/lease')
  @ApiOperation({ operationId: 'releaseReviewLease' })
  @HttpCode(204)
  @WorkspaceRoleRequired('member', QUEUE)
  @ApiNoContentResponse({ description: 'Released' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'no_lease' })
  async release(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @UuidParam('item_id') itemId: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.work.release(access, id, itemId, caller);
  }

  /** The final label of an item in disagreement (admins and the queue's adjudicators). */
  @Post(':queue_id/items/:item_id/adjudication')
  @ApiOperation({ operationId: 'adjudicateReviewItem' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', QUEUE)
  @ApiOkResponse({ type: ReviewItemResponse })
  @ApiForbiddenResponse({ type: ProblemResponse, description: 'not_an_adjudicator' })
  @ApiUnprocessableEntityResponse({ type: ProblemResponse, description: 'label_invalid' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'not_in_disagreement' })
  adjudicate(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @UuidParam('item_id') itemId: string,
    @Body() body: AdjudicateRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ReviewItemResponse> {
    return this.work.adjudicate(access, id, itemId, body.values, caller);
  }

  /** Items in disagreement with every reviewer's labels (admins and the queue's adjudicators). */
  @Get(':queue_id/disagreements')
  @ApiOperation({ operationId: 'listReviewDisagreements' })
  @WorkspaceRoleRequired('member', QUEUE)
  @ApiOkResponse({ type: PageOf(DisagreementResponse) })
  @ApiForbiddenResponse({ type: ProblemResponse, description: 'not_an_adjudicator' })
  disagreements(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @Query() query: PageQueryDto,
    @CurrentUser() caller: Principal,
  ): Promise<Page<DisagreementResponse>> {
    return this.work.disagreements(access, id, query, caller);
  }

  /** The final labels, in queue order (viewers). */
  @Get(':queue_id/labels')
  @ApiOperation({ operationId: 'listReviewFinalLabels' })
  @WorkspaceRoleRequired('viewer', QUEUE)
  @ApiOkResponse({ type: PageOf(FinalLabelResponse) })
  finalLabels(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<FinalLabelResponse>> {
    return this.labels.list(access, id, query);
  }

  /** The reviewers' agreement per rubric field, with seeded bootstrap intervals over items (viewers). */
  @Get(':queue_id/agreement')
  @ApiOperation({ operationId: 'getReviewAgreement' })
  @WorkspaceRoleRequired('viewer', QUEUE)
  @ApiOkResponse({ type: AgreementResponse })
  agreement(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @Query() query: AgreementQuery,
  ): Promise<AgreementResponse> {
    return this.labels.agreement(access, id, query);
  }

  /**
   * Writes the final labels as a new candidate version of a test-case dataset, as label columns
   * of the source dataset's rows, or (a traces queue, `ground_truth`) as the trace version's next
   * ground truth (members).
   */
  @Post(':queue_id/exports')
  @ApiOperation({ operationId: 'exportReviewLabels' })
  @WorkspaceRoleRequired('member', QUEUE)
  @ApiCreatedResponse({ type: ReviewExportResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'nothing_to_export, export_target_invalid' })
  @ApiUnprocessableEntityResponse({ type: ProblemResponse, description: 'export_field_invalid' })
  export(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @Body() body: ReviewExportRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ReviewExportResponse> {
    return this.labels.export(access, id, body, caller);
  }

  /**
   * Validates a judged metric of a run against the queue's final labels of a rubric field
   * (members): each finally labelled row's verdict pairs with the judge's, each reviewer's label
   * goes along as the reviewers' agreement (the ceiling a judge can reach), and the validation is
   * kept with the metric's config version, as POST /runs/{run_id}/judge-validations keeps it.
   */
  @Post(':queue_id/judge-validations')
  @ApiOperation({ operationId: 'validateJudgeWithReviewQueue' })
  @WorkspaceRoleRequired('member', QUEUE)
  @ApiCreatedResponse({ type: JudgeValidationResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'no_final_labels' })
  @ApiUnprocessableEntityResponse({
    type: ProblemResponse,
    description:
      'judge_validation_source_invalid, rubric_field_not_rated, validation_metric_invalid, validation_no_overlap, validation_too_few_pairs, validation_too_many_pairs',
  })
  validateJudge(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('queue_id') id: string,
    @Body() body: ValidateJudgeWithQueueRequest,
    @CurrentUser() caller: Principal,
  ): Promise<JudgeValidationResponse> {
    return this.validation.validateJudge(access, id, body, caller);
  }
}
