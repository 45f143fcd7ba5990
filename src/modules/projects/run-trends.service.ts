import { Injectable } from '@nestjs/common';
import type { TrendCell } from './trend.js';

/** A run as a project's trend lists it (its documented state: `runStateOf`). */
export interface TrendRun {
  id: string;
  name: string;
  state: string;
  sut_id: string;
  dataset_id: string;
  created_at: Date;
}

export interface TrendRunFilter {
  sutIds: string[];
  datasetIds: string[];
  from?: Date;
  to?: Date;
  states: string[];
}

/** What a project's trend reads of runs; the runs family provides it. */
export interface RunTrendSource {
  /** The runs of the SUTs or datasets in the window (at most 1000), oldest first. */
  runs(workspaceId: string, filter: TrendRunFilter): Promise<TrendRun[]>;
  /** Per run, metric and group value: the sum, count, range and verdicts of numeric scores. */
  cells(workspaceId: string, runIds: string[], metrics: string[] | null, groupBy: string | null): Promise<TrendCell[]>;
}

/**
 * Where a project's trend finds the runs family. Runs imports projects (the release gate asks
 * for a run's project and plan), so projects cannot import runs: RunsModule provides the source
 * here when it starts (as families register their tables with the access guard).
 */
@Injectable()
export class RunTrends implements RunTrendSource {
  private source?: RunTrendSource;

  provide(source: RunTrendSource): void {
    this.source = source;
  }

  runs(workspaceId: string, filter: TrendRunFilter): Promise<TrendRun[]> {
    return this.provided().runs(workspaceId, filter);
  }

  cells(workspaceId: string, runIds: string[], metrics: string[] | null, groupBy: string | null): Promise<TrendCell[]> {
    return this.provided().cells(workspaceId, runIds, metrics, groupBy);
  }

  private provided(): RunTrendSource {
    if (!this.source) throw new Error('No run trend source: the runs module provides it when it starts');
    return this.source;
  }
}
