import { Injectable } from '@nestjs/common';
import type { RunTrendSource, TrendRun, TrendRunFilter } from '../projects/run-trends.service.js';
import type { TrendCell } from '../projects/trend.js';
import { RunsRepository } from './runs.repository.js';

/** What a project's trend reads of runs (provided to projects' `RunTrends` when RunsModule starts). */
@Injectable()
export class ProjectTrendsService implements RunTrendSource {
  constructor(private readonly runsRepo: RunsRepository) {}

  runs(workspaceId: string, filter: TrendRunFilter): Promise<TrendRun[]> {
    return this.runsRepo.trendRuns(workspaceId, filter);
  }

  cells(workspaceId: string, runIds: string[], metrics: string[] | null, groupBy: string | null): Promise<TrendCell[]> {
    return this.runsRepo.trendCells(workspaceId, runIds, metrics, groupBy);
  }
}
