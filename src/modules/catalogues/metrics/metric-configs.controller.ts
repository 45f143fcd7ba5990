import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
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
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import {
  CreateMetricConfigRequest,
  ListMetricConfigsQuery,
  MetricConfigResponse,
  MetricConfigSummary,
  UpdateMetricConfigRequest,
  WorkspaceQuery,
} from '../dto/metric-config.dto.js';
import { MetricConfigsService } from './metric-configs.service.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

const IN_WORKSPACE = { query: 'workspace_id' } as const;

@ApiTags('metric configs')
@Controller('metric-configs')
export class MetricConfigsController {
  constructor(private readonly configs: MetricConfigsService) {}

  /** One line per config name, from its newest version (viewers). */
  @Get()
  @ApiOperation({ operationId: 'listMetricConfigs' })
  @WorkspaceRoleRequired('viewer', IN_WORKSPACE)
  @ApiOkResponse({ type: PageOf(MetricConfigSummary) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ListMetricConfigsQuery,
  ): Promise<Page<MetricConfigSummary>> {
    return this.configs.list(access, query);
  }

  /** Version 1 of a new config (members): parameters are checked against the metric's schema, rubrics parsed, judges looked up. */
  @Post()
  @ApiOperation({ operationId: 'createMetricConfig' })
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: MetricConfigResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'metric_config_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateMetricConfigRequest,
    @CurrentUser() caller: Principal,
  ): Promise<MetricConfigResponse> {
    return this.configs.create(access, body, caller);
  }

  /** A version (`latest` for the newest) (viewers). */
  @Get(':config_name/:config_version')
  @ApiOperation({ operationId: 'getMetricConfigVersion' })
  @WorkspaceRoleRequired('viewer', IN_WORKSPACE)
  @ApiOkResponse({ type: MetricConfigResponse })
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('config_name', PATH_TEXT.name) name: string,
    @TextParam('config_version', PATH_TEXT.version) version: string,
    @Query() _query: WorkspaceQuery,
  ): Promise<MetricConfigResponse> {
    return this.configs.get(access, name, version);
  }

  /** Changes a version no run has used yet (members); a used version is frozen (409): create a new version. */
  @Put(':config_name/:config_version')
  @ApiOperation({ operationId: 'replaceMetricConfigVersion' })
  @WorkspaceRoleRequired('member', IN_WORKSPACE)
  @ApiOkResponse({ type: MetricConfigResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'metric_config_frozen' })
  update(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('config_name', PATH_TEXT.name) name: string,
    @TextParam('config_version', PATH_TEXT.version) version: string,
    @Query() _query: WorkspaceQuery,
    @Body() body: UpdateMetricConfigRequest,
    @CurrentUser() caller: Principal,
  ): Promise<MetricConfigResponse> {
    return this.configs.update(access, name, version, body, caller);
  }

  /** Deletes a version no run used and nothing pins (members). */
  @Delete(':config_name/:config_version')
  @ApiOperation({ operationId: 'deleteMetricConfigVersion' })
  @HttpCode(204)
  @WorkspaceRoleRequired('member', IN_WORKSPACE)
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'metric_config_frozen, metric_config_in_use' })
  async delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('config_name', PATH_TEXT.name) name: string,
    @TextParam('config_version', PATH_TEXT.version) version: string,
    @Query() _query: WorkspaceQuery,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.configs.delete(access, name, version, caller);
  }
}
