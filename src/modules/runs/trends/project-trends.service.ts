import { Injectable } from '@nestjs/common';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import type { ProjectTrendResponse, TrendRequest } from '../../projects/dto/insights.dto.js';
import { ProjectsService } from '../../projects/projects.service.js';
import { ProjectTrendsRepository } from './project-trends.repository.js';
import { buildSeries } from './trend.js';

/**
 * A project's trend: the metric values of its runs over time, per dimension value. The project
 * says what the trend covers (ProjectsService.trendScope checks it); the runs are this family's.
 */
@Injectable()
export class ProjectTrendsService {
  constructor(
    private readonly projects: ProjectsService,
    private readonly runsRepo: ProjectTrendsRepository,
  ) {}

  async trend(access: WorkspaceAccess, projectId: string, body: TrendRequest): Promise<ProjectTrendResponse> {
    const scope = await this.projects.trendScope(access, projectId, body);
    const interval = body.interval ?? 'run';
    const runs = await this.runsRepo.trendRuns(access.workspaceId, scope.filter);
    const cells = await this.runsRepo.trendCells(
      access.workspaceId,
      runs.map((r) => r.id),
      body.metrics ?? null,
      scope.groupBy,
    );
    return {
      project_id: scope.projectId,
      interval,
      group_by: scope.groupBy,
      from: body.from ?? null,
      to: body.to ?? null,
      metrics: body.metrics ?? [...new Set(cells.map((c) => c.metric))].sort(),
      runs: runs.map((r) => ({
        id: r.id,
        name: r.name,
        state: r.state,
        sut_id: r.sut_id,
        dataset_id: r.dataset_id,
        created_at: new Date(r.created_at),
      })),
      series: buildSeries(cells, interval),
    };
  }
}
