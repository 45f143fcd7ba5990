import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { CreateMetricConfigVersionRequest, MetricConfigResponse } from '../dto/metric-config.dto.js';
import {
  MetricConfigResolutionListResponse,
  ResolveMetricConfigsQuery,
  SetMetricDefaultsRequest,
  WorkspaceMetricConfigDefaultListResponse,
  WorkspaceMetricConfigDefaultVersionsResponse,
} from '../dto/metric-defaults.dto.js';
import { MetricConfigsService } from './metric-configs.service.js';
import { MetricDefaultsService } from './metric-defaults.service.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

const WORKSPACE = { param: 'workspace_id' } as const;

@ApiTags('metric configs')
@Controller('workspaces/:workspace_id')
export class WorkspaceMetricConfigsController {
  constructor(
    private readonly defaults: MetricDefaultsService,
    private readonly configs: MetricConfigsService,
  ) {}

  /** The workspace's pinned default config per metric (viewers). */
  @Get('metric-config-defaults')
  @ApiOperation({ operationId: 'listMetricConfigDefaults' })
  @WorkspaceRoleRequired('viewer', WORKSPACE)
  @ApiOkResponse({ type: WorkspaceMetricConfigDefaultListResponse })
  listDefaults(@CurrentWorkspace() access: WorkspaceAccess): Promise<WorkspaceMetricConfigDefaultListResponse> {
    return this.defaults.list(access);
  }

  /** Pins (or, with config_name null, clears) the default config of metrics (admins); each change is a revision. */
  @Post('metric-config-defaults')
  @ApiOperation({ operationId: 'setMetricConfigDefaults' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiCreatedResponse({ type: WorkspaceMetricConfigDefaultListResponse })
  setDefaults(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: SetMetricDefaultsRequest,
    @CurrentUser() caller: Principal,
  ): Promise<WorkspaceMetricConfigDefaultListResponse> {
    return this.defaults.set(access, body, caller);
  }

  /** Every revision of one metric's default, newest first (viewers). */
  @Get('metric-config-defaults/:metric_name/versions')
  @ApiOperation({ operationId: 'listMetricConfigDefaultVersions' })
  @WorkspaceRoleRequired('viewer', WORKSPACE)
  @ApiOkResponse({ type: WorkspaceMetricConfigDefaultVersionsResponse })
  defaultVersions(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('metric_name', PATH_TEXT.metric) metricName: string,
  ): Promise<WorkspaceMetricConfigDefaultVersionsResponse> {
    return this.defaults.history(access, metricName);
  }

  /** Which config version is in force for each metric, and why (for an eval config when given) (viewers). */
  @Get('metric-configs/resolved')
  @ApiOperation({ operationId: 'listResolvedMetricConfigs' })
  @WorkspaceRoleRequired('viewer', WORKSPACE)
  @ApiOkResponse({ type: MetricConfigResolutionListResponse })
  resolved(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ResolveMetricConfigsQuery,
  ): Promise<MetricConfigResolutionListResponse> {
    return this.defaults.resolved(access, query);
  }

  /** The next version of a config (members): what the body leaves out is copied from `from_version` (default the newest). */
  @Post('metric-configs/:config_name/versions')
  @ApiOperation({ operationId: 'createMetricConfigVersion' })
  @WorkspaceRoleRequired('member', WORKSPACE)
  @ApiCreatedResponse({ type: MetricConfigResponse })
  createVersion(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('config_name', PATH_TEXT.name) name: string,
    @Body() body: CreateMetricConfigVersionRequest,
    @CurrentUser() caller: Principal,
  ): Promise<MetricConfigResponse> {
    return this.configs.createVersion(access, name, body, caller);
  }
}
