import { Body, Controller, Delete, Get, Header, HttpCode, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import { Authenticated, CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import {
  CreateReportConfigRequest,
  ReportConfigResponse,
  ReportConfigSummary,
  WorkspaceQuery,
} from './dto/report-configs.dto.js';
import { ReportConfigsService } from './report-configs.service.js';

const CONFIG = { resource: 'report_config', param: 'config_id' } as const;

@ApiTags('reports')
@Controller('report-configs')
export class ReportConfigsController {
  constructor(private readonly configs: ReportConfigsService) {}

  /** The workspace's report configs by name (viewers). */
  @Get()
  @ApiOperation({ operationId: 'listReportConfigs' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: [ReportConfigSummary] })
  list(@CurrentWorkspace() access: WorkspaceAccess, @Query() _query: WorkspaceQuery): Promise<ReportConfigSummary[]> {
    return this.configs.list(access);
  }

  /** Adds a report config (members): its sections in order, their titles and extra questions. */
  @Post()
  @ApiOperation({ operationId: 'createReportConfig' })
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: ReportConfigResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, report_config_invalid' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'report_config_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateReportConfigRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ReportConfigResponse> {
    return this.configs.create(access, body, caller);
  }

  /** A starting config as commented YAML: every built-in section in the default order (any authenticated user). */
  @Get('template')
  @ApiOperation({ operationId: 'getReportConfigTemplate' })
  @Authenticated()
  @Header('Content-Type', 'text/plain; charset=utf-8')
  @ApiProduces('text/plain')
  @ApiOkResponse({ schema: { type: 'string' }, description: 'The template as YAML' })
  template(): string {
    return this.configs.template();
  }

  /** One report config (viewers). */
  @Get(':config_id')
  @ApiOperation({ operationId: 'getReportConfig' })
  @WorkspaceRoleRequired('viewer', CONFIG)
  @ApiOkResponse({ type: ReportConfigResponse })
  get(@CurrentWorkspace() access: WorkspaceAccess, @UuidParam('config_id') id: string): Promise<ReportConfigResponse> {
    return this.configs.get(access, id);
  }

  /** Deletes a report config (members); reports and settings that named it keep working without it. */
  @Delete(':config_id')
  @ApiOperation({ operationId: 'deleteReportConfig' })
  @HttpCode(204)
  @WorkspaceRoleRequired('member', CONFIG)
  @ApiNoContentResponse({ description: 'Deleted' })
  async delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('config_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.configs.delete(access, id, caller);
  }
}
