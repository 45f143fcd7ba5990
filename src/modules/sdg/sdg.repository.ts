import { Injectable } from '@nestjs/common';
import { entityPage } from '#libs/database/typed-fragments.js';
import { SdgAdapterEntity } from './entities/sdg-adapter.entity.js';
import { SdgRunEntity } from './entities/sdg-run.entity.js';
import { Db } from '#libs/database/unit-of-work.js';
import { nameTaken } from '#libs/database/record-queries.js';
import type { JsonObject } from '#libs/database/schema.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';
import { publishedRows } from '#libs/database/typed-fragments.js';
import { trackedRecord } from '#libs/queue/tracked-job.js';

/** The record an SDG job settles (its `sdg_run_id`): the queue keeps its tracked columns. */
export const SDG_RUNS = trackedRecord('sdg_runs', 'sdg_run_id');

@Injectable()
export class SdgRepository {
  constructor(private readonly db: Db) {}

  private get adapters() {
    return this.db.repository(SdgAdapterEntity);
  }

  private get runs() {
    return this.db.repository(SdgRunEntity);
  }

  page(workspaceId: string, window: { skip: number; take: number }): Promise<[SdgAdapterEntity[], number]> {
    return entityPage(
      this.db,
      this.adapters,
      (q) => q.selectFrom('sdg_adapters').where('workspace_id', '=', workspaceId),
      (query) => query.orderBy('name', 'asc').orderBy('id', 'asc'),
      window,
    );
  }

  find(workspaceId: string, id: string): Promise<SdgAdapterEntity | null> {
    return this.adapters.findOne({ where: { id, workspaceId } });
  }

  async nameTaken(workspaceId: string, name: string): Promise<boolean> {
    return nameTaken(this.db, 'sdg_adapters', { column: 'workspace_id', value: workspaceId }, name);
  }

  saveAdapter(adapter: Partial<SdgAdapterEntity>): Promise<SdgAdapterEntity> {
    const repo = this.adapters;
    return repo.save(repo.create(adapter));
  }

  /** The latest runs of each adapter given, newest first. */
  async recentRuns(adapterIds: string[], limit: number): Promise<SdgRunEntity[]> {
    if (!adapterIds.length) return [];
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('sdg_runs')
        .selectAll()
        .where('adapter_id', 'in', adapterIds)
        .orderBy('created_at', 'desc')
        .limit(limit * adapterIds.length),
    );
    return entitiesFrom(this.runs, rows);
  }

  /** A run of the adapter, in the workspace. */
  findRunOf(workspaceId: string, adapterId: string, id: string): Promise<SdgRunEntity | null> {
    return this.runs.findOne({ where: { id, adapterId, workspaceId } });
  }

  /** Workspace-free, for the generator resolving its job's run. */
  findRunUnscoped(id: string): Promise<SdgRunEntity | null> {
    return this.runs.findOne({ where: { id } });
  }

  /** Saves what the run made; its tracked columns are the queue's (`TrackedRecords`). */
  saveRun(run: Partial<SdgRunEntity>): Promise<SdgRunEntity> {
    const repo = this.runs;
    return repo.save(repo.create(run));
  }

  /** The first `limit` rows of a version, in dataset order: an SDG run's seed rows. */
  seedRows(datasetId: string, versionNumber: number, limit: number): Promise<Array<{ data: JsonObject }>> {
    return this.db.typed((q) =>
      q.selectFrom(publishedRows(datasetId, versionNumber)).select('r.data').orderBy('r.ordinal').limit(limit),
    );
  }
}
