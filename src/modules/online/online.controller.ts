import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, PageQueryDto, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { AcceptedAt } from '#libs/queue/accepted.decorator.js';
import {
  BackfillResponse,
  CreateBackfillRequest,
  CreateOnlineEvaluatorRequest,
  EvaluatorTargetResponse,
  EvaluatorVersionList,
  ListEvaluatorTargetsQuery,
  ListOnlineEvaluatorsQuery,
  OnlineEvaluatorResponse,
  UpdateOnlineEvaluatorRequest,
} from './dto/online.dto.js';
import { OnlineEvaluatorsService } from './online-evaluators.service.js';

export const EVALUATOR = { resource: 'online_evaluator', param: 'evaluator_id' } as const;
const BACKFILL = { resource: 'online_backfill', param: 'backfill_id' } as const;

@ApiTags('online evaluation')
@Controller()
export class OnlineController {
  constructor(private readonly evaluators: OnlineEvaluatorsService) {}

  /** Creates an evaluator on a trace dataset (members): what lands from now on is sampled and scored; earlier traces take a backfill. */
  @Post('online-evaluators')
  @ApiOperation({ operationId: 'createOnlineEvaluator' })
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: OnlineEvaluatorResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'online_evaluator_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateOnlineEvaluatorRequest,
    @CurrentUser() caller: Principal,
  ): Promise<OnlineEvaluatorResponse> {
    return this.evaluators.create(access, body, caller);
  }

  /** The workspace's evaluators, newest first (viewers); `dataset_id` and `state` filter. */
  @Get('online-evaluators')
  @ApiOperation({ operationId: 'listOnlineEvaluators' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: PageOf(OnlineEvaluatorResponse) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ListOnlineEvaluatorsQuery,
  ): Promise<Page<OnlineEvaluatorResponse>> {
    return this.evaluators.list(access, query);
  }

  /** One evaluator with its current version, status, progress and targets by state (viewers). */
  @Get('online-evaluators/:evaluator_id')
  @ApiOperation({ operationId: 'getOnlineEvaluator' })
  @WorkspaceRoleRequired('viewer', EVALUATOR)
  @ApiOkResponse({ type: OnlineEvaluatorResponse })
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('evaluator_id') id: string,
  ): Promise<OnlineEvaluatorResponse> {
    return this.evaluators.get(access, id);
  }

  /** Changes an evaluator (members): pause or resume it, rename it, or change what it scores (its next version). */
  @Patch('online-evaluators/:evaluator_id')
  @ApiOperation({ operationId: 'updateOnlineEvaluator' })
  @WorkspaceRoleRequired('member', EVALUATOR)
  @ApiOkResponse({ type: OnlineEvaluatorResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'online_evaluator_name_taken' })
  update(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('evaluator_id') id: string,
    @Body() body: UpdateOnlineEvaluatorRequest,
    @CurrentUser() caller: Principal,
  ): Promise<OnlineEvaluatorResponse> {
    return this.evaluators.update(access, id, body, caller);
  }

  /** Deletes an evaluator with its ledger and backfills (admins); the scores it recorded stay with the traces. */
  @Delete('online-evaluators/:evaluator_id')
  @ApiOperation({ operationId: 'deleteOnlineEvaluator' })
  @HttpCode(204)
  @WorkspaceRoleRequired('admin', EVALUATOR)
  @ApiNoContentResponse({ description: 'Deleted' })
  async delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('evaluator_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.evaluators.delete(access, id, caller);
  }

  /** Every version of the evaluator, newest first (viewers). */
  @Get('online-evaluators/:evaluator_id/versions')
  @ApiOperation({ operationId: 'listOnlineEvaluatorVersions' })
  @WorkspaceRoleRequired('viewer', EVALUATOR)
  @ApiOkResponse({ type: EvaluatorVersionList })
  versions(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('evaluator_id') id: string,
  ): Promise<EvaluatorVersionList> {
    return this.evaluators.versions(access, id);
  }

  /** The targets the evaluator took (sampled spans, traces or sessions), newest first, with their state (viewers). */
  @Get('online-evaluators/:evaluator_id/targets')
  @ApiOperation({ operationId: 'listOnlineEvaluatorTargets' })
  @WorkspaceRoleRequired('viewer', EVALUATOR)
  @ApiOkResponse({ type: PageOf(EvaluatorTargetResponse) })
  targets(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('evaluator_id') id: string,
    @Query() query: ListEvaluatorTargetsQuery,
  ): Promise<Page<EvaluatorTargetResponse>> {
    return this.evaluators.targets(access, id, query);
  }

  /** Scores the traces of a past time range with the current version, each once, as a tracked job (members). */
  @Post('online-evaluators/:evaluator_id/backfills')
  @ApiOperation({ operationId: 'startOnlineBackfill' })
  @WorkspaceRoleRequired('member', EVALUATOR)
  @AcceptedAt({ type: BackfillResponse, location: (b) => `/online-backfills/${b.id}` })
  startBackfill(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('evaluator_id') id: string,
    @Body() body: CreateBackfillRequest,
    @CurrentUser() caller: Principal,
  ): Promise<BackfillResponse> {
    return this.evaluators.startBackfill(access, id, body, caller);
  }

  /** The evaluator's backfills, newest first (viewers). */
  @Get('online-evaluators/:evaluator_id/backfills')
  @ApiOperation({ operationId: 'listOnlineBackfills' })
  @WorkspaceRoleRequired('viewer', EVALUATOR)
  @ApiOkResponse({ type: PageOf(BackfillResponse) })
  backfills(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('evaluator_id') id: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<BackfillResponse>> {
    return this.evaluators.backfills(access, id, query);
  }

  /** One backfill with its progress (viewers): poll it until `succeeded`, `failed` or `cancelled`. */
  @Get('online-backfills/:backfill_id')
  @ApiOperation({ operationId: 'getOnlineBackfill' })
  @WorkspaceRoleRequired('viewer', BACKFILL)
  @ApiOkResponse({ type: BackfillResponse })
  backfill(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('backfill_id') id: string,
  ): Promise<BackfillResponse> {
    return this.evaluators.backfill(access, id);
  }

  /** Cancels a queued or running backfill (members); what it scored keeps its scores. */
  @Post('online-backfills/:backfill_id\\:cancel')
  @ApiOperation({ operationId: 'cancelOnlineBackfill' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', BACKFILL)
  @ApiOkResponse({ type: BackfillResponse })
  cancelBackfill(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('backfill_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<BackfillResponse> {
    return this.evaluators.cancelBackfill(access, id, caller);
  }
}
