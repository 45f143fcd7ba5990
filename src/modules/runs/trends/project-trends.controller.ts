import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { ProjectTrendResponse, TrendRequest } from '../../projects/dto/insights.dto.js';
import { ProjectTrendsService } from './project-trends.service.js';

/** A project's trend is served by the family whose records it reads: the runs. */
@ApiTags('projects')
@Controller('projects')
export class ProjectTrendsController {
  constructor(private readonly trends: ProjectTrendsService) {}

  /** Metric values of the project's runs (of its SUTs or datasets) over time, per dimension value, ready for a chart (viewers). */
  @Post(':project_id/trend')
  @ApiOperation({ operationId: 'getProjectTrend' })
  @HttpCode(200)
  @WorkspaceRoleRequired('viewer', { resource: 'project', param: 'project_id' })
  @ApiOkResponse({ type: ProjectTrendResponse })
  @ApiBadRequestResponse({
    type: ProblemResponse,
    description: 'validation_failed, project_dimension_unknown, invalid_time_range',
  })
  trend(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('project_id') id: string,
    @Body() body: TrendRequest,
  ): Promise<ProjectTrendResponse> {
    return this.trends.trend(access, id, body);
  }
}
