import { Injectable } from '@nestjs/common';
import { AppConfig } from '#libs/config/app-config.js';
import type { RunEntity } from './entities/run.entity.js';
import { itemPages } from './execution/run-item-pages.js';
import { RunsRepository, type RunItemRow } from './runs.repository.js';
import { JudgeValidationsService } from '../catalogues/judge-validations/judge-validations.service.js';
import type { ConfusionMatrix } from '#libs/evaluation/statistics/judge-validity.js';

export type { RunItemRow } from './runs.repository.js';

/** What other families (reports) read of runs: a run of a workspace, its recorded items and the run before it, never the tables. */
@Injectable()
export class RunReadService {
  constructor(
    private readonly runs: RunsRepository,
    private readonly config: AppConfig,
    private readonly validations: JudgeValidationsService,
  ) {}

  /** The newest validation of each judged metric's config version (the run's), by metric name: what corrects its pass rate. */
  async judgeValidations(
    run: Pick<RunEntity, 'workspaceId' | 'snapshot'>,
  ): Promise<Record<string, { id: string; confusion: ConfusionMatrix; level: number }>> {
    const judged = run.snapshot.metrics.filter((m) => m.kind === 'judged' && m.config);
    const latest = await this.validations.latest(
      run.workspaceId,
      judged.map((m) => m.config!.id),
    );
    return Object.fromEntries(
      judged.flatMap((m) => {
        const v = latest.get(m.config!.id);
        return v ? [[m.name, { id: v.id, confusion: v.result.confusion, level: v.result.level }]] : [];
      }),
    );
  }

  /** The workspace's run, or null (also when the run belongs to another workspace). */
  find(workspaceId: string, id: string): Promise<RunEntity | null> {
    return this.runs.find(workspaceId, id);
  }

  /** The items of a run found with `find` a page at a time (RUN_PAGE_SIZE), in execution order (sessions by their first row, turns in order). */
  itemPages(runId: string): AsyncGenerator<RunItemRow[]> {
    return itemPages((from, limit) => this.runs.itemPage(runId, from, limit), this.config.env.RUN_PAGE_SIZE);
  }

  /** The names of the dimensions the run's rows have values for, sorted. */
  async dimensionNames(runId: string): Promise<string[]> {
    return (await this.runs.dimensionNames(runId)).sort();
  }

  /** The id of the newest succeeded run of the same SUT on the same dataset created before this one (a report's baseline), or null. */
  previousSucceededId(
    run: Pick<RunEntity, 'id' | 'workspaceId' | 'sutId' | 'datasetId' | 'createdAt'>,
  ): Promise<string | null> {
    return this.runs.previousSucceededId(run);
  }
}
