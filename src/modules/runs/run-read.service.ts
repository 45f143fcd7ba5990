import { Injectable } from '@nestjs/common';
import type { RunEntity } from './entities/run.entity.js';
import { RunsRepository, type RunItemRow } from './runs.repository.js';

export type { RunItemRow } from './runs.repository.js';

/** What other families (reports) read of runs: a run of a workspace, its recorded items and the run before it, never the tables. */
@Injectable()
export class RunReadService {
  constructor(private readonly runs: RunsRepository) {}

  /** The workspace's run, or null (also when the run belongs to another workspace). */
  find(workspaceId: string, id: string): Promise<RunEntity | null> {
    return this.runs.findIn(workspaceId, id);
  }

  /** Every item of a run found with `find`, in execution order (sessions by their first row, turns in order). */
  items(runId: string): Promise<RunItemRow[]> {
    return this.runs.items(runId);
  }

  /** The id of the newest succeeded run of the same SUT on the same dataset created before this one (a report's baseline), or null. */
  previousSucceededId(
    run: Pick<RunEntity, 'id' | 'workspaceId' | 'sutId' | 'datasetId' | 'createdAt'>,
  ): Promise<string | null> {
    return this.runs.previousSucceededId(run);
  }
}
