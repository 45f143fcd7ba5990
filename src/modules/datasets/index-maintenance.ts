import { Injectable } from '@nestjs/common';
import { JobHandler } from '../../../libs/queue/job-handler.decorator.js';
import { JobQueue } from '../../../libs/queue/job-queue.service.js';
import { RowsRepository } from './rows.repository.js';

/** Writes of at least this many rows schedule a merge of the row index's pending list. */
export const MERGE_AFTER_ROWS = 10_000;

/**
 * Bulk writes leave their GIN entries in the index's pending list (fast loads); a queued job
 * merges the list right after the write commits, so queries are fast again within seconds
 * instead of waiting for autovacuum (which the embedded database does not run).
 */
@Injectable()
export class DatasetIndexMaintenance {
  constructor(
    private readonly rows: RowsRepository,
    private readonly queue: JobQueue,
  ) {}

  /** Call inside the write's transaction: the job is dispatched once it commits. */
  async afterBulkWrite(workspaceId: string, datasetId: string, rowsWritten: number): Promise<void> {
    if (rowsWritten < MERGE_AFTER_ROWS) return;
    await this.queue.enqueue({ type: 'datasets.merge-row-index', payload: { rows: rowsWritten }, workspaceId, targetType: 'dataset', targetId: datasetId });
  }

  @JobHandler('datasets.merge-row-index')
  async merge(): Promise<{ pages_merged: number }> {
    return { pages_merged: await this.rows.mergePendingIndex() };
  }
}
