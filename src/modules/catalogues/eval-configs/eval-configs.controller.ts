import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPreconditionFailedResponse,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import {
  CreateEvalConfigRequest,
  EvalConfigResponse,
  ListEvalConfigsQuery,
  ReplaceEvalConfigRequest,
} from '../dto/eval-config.dto.js';
import { EvalConfigsService } from './eval-configs.service.js';
import { IfMatch, WithETag } from '#libs/common/etag.decorators.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { evalConfigEtag } from '../catalogues.mapper.js';

const EVAL_CONFIG = { resource: 'eval_config', param: 'eval_config_id' } as const;

@ApiTags('eval configs')
@Controller('eval-configs')
export class EvalConfigsController {
  constructor(private readonly evalConfigs: EvalConfigsService) {}

  /** The workspace's eval configs by name; `q` searches names (viewers). */
  @Get()
  @ApiOperation({ operationId: 'listEvalConfigs' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: PageOf(EvalConfigResponse) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ListEvalConfigsQuery,
  ): Promise<Page<EvalConfigResponse>> {
    return this.evalConfigs.list(access, query);
  }

  /** A bundle of metrics, a default judge and a pass rule (members); every metric must resolve and every judged one have a judge. */
  @Post()
  @ApiOperation({ operationId: 'createEvalConfig' })
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: EvalConfigResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'eval_config_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateEvalConfigRequest,
    @CurrentUser() caller: Principal,
  ): Promise<EvalConfigResponse> {
    return this.evalConfigs.create(access, body, caller);
  }

  /** One eval config (viewers); the ETag serves If-Match on PUT. */
  @Get(':eval_config_id')
  @ApiOperation({ operationId: 'getEvalConfig' })
  @WorkspaceRoleRequired('viewer', EVAL_CONFIG)
  @ApiOkResponse({ type: EvalConfigResponse })
  @WithETag(evalConfigEtag)
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('eval_config_id') id: string,
  ): Promise<EvalConfigResponse> {
    return this.evalConfigs.get(access, id);
  }

  /** Replaces the eval config (members); honours If-Match. Runs keep the snapshot they started with. */
  @Put(':eval_config_id')
  @ApiOperation({ operationId: 'replaceEvalConfig' })
  @WorkspaceRoleRequired('member', EVAL_CONFIG)
  @ApiOkResponse({ type: EvalConfigResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'eval_config_name_taken' })
  @ApiPreconditionFailedResponse({ type: ProblemResponse, description: 'If-Match does not match the current ETag' })
  @WithETag(evalConfigEtag)
  replace(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('eval_config_id') id: string,
    @Body() body: ReplaceEvalConfigRequest,
    @IfMatch() ifMatch: IfMatchPrecondition,
    @CurrentUser() caller: Principal,
  ): Promise<EvalConfigResponse> {
    return this.evalConfigs.replace(access, id, body, ifMatch, caller);
  }

  /** Deletes an eval config (members); runs that used it keep their snapshot. */
  @Delete(':eval_config_id')
  @ApiOperation({ operationId: 'deleteEvalConfig' })
  @HttpCode(204)
  @WorkspaceRoleRequired('member', EVAL_CONFIG)
  @ApiNoContentResponse({ description: 'Deleted' })
  async delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('eval_config_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.evalConfigs.delete(access, id, caller);
  }
}
