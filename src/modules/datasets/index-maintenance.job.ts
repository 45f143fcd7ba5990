import { Injectable } from '@nestjs/common';
import { JobHandler } from '#libs/queue/job-handler.decorator.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { AppConfig } from '#libs/config/app-config.js';
import { RowsRepository } from './rows/rows.repository.js';
import { MERGE_ROW_INDEX_JOB } from './datasets.jobs.js';

/** Writes of at least this many rows schedule a merge of the row index's pending list. */
export const MERGE_AFTER_ROWS = 10_000;
/**
 * On the embedded database the merge holds its one connection for seconds (what a bulk write
 * leaves there is at most its first 100,000 rows' entries, up to 16 MB, BulkWriter;
 * docs/performance.md#dataset-uploads), so it starts this long after the write commits: the
 * writer's answer, and the reads a client makes right after it, are not queued behind it.
 */
export const EMBEDDED_MERGE_DELAY_MS = 2_000;

/**
 * Bulk writes leave their GIN entries in the index's pending list (fast loads; up to 128 MB on
 * PostgreSQL; on the embedded database a bulk write's first 100,000 rows, up to 16 MB, and the
 * write merges the rest 4 MB at a time); a queued job merges what is left and refreshes the
 * statistics right after the write commits, so queries are fast again within seconds instead of
 * waiting for autovacuum (which the embedded database does not run).
 */
@Injectable()
export class DatasetIndexMaintenance {
  constructor(
    private readonly rows: RowsRepository,
    private readonly queue: JobQueue,
    private readonly config: AppConfig,
  ) {}

  /** Call inside the write's transaction: the job is dispatched once it commits. */
  async afterBulkWrite(workspaceId: string, datasetId: string, rowsWritten: number): Promise<void> {
    if (rowsWritten < MERGE_AFTER_ROWS) return;
    const runAfter = this.config.embedded ? new Date(Date.now() + EMBEDDED_MERGE_DELAY_MS) : undefined;
    await this.queue.enqueue({
      type: MERGE_ROW_INDEX_JOB,
      payload: { rows: rowsWritten },
      workspaceId,
      targetType: 'dataset',
      targetId: datasetId,
      runAfter,
    });
  }

  @JobHandler(MERGE_ROW_INDEX_JOB)
  async merge(): Promise<{ pages_merged: number }> {
    return { pages_merged: await this.rows.mergePendingIndex() };
  }
}
