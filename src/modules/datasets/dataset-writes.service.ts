import { Injectable } from '@nestjs/common';
import type { BulkValue } from '../../../libs/database/bulk-writer.js';
import { Db } from '../../../libs/database/unit-of-work.js';
import { DatasetsRepository } from './datasets.repository.js';
import type { DatasetVersionEntity } from './entities/dataset-version.entity.js';
import type { DatasetEntity } from './entities/dataset.entity.js';
import { RowsRepository } from './rows/rows.repository.js';
import { SpanRowsRepository, type RowSource } from './span-rows.repository.js';

export type { RowSource } from './span-rows.repository.js';

/**
 * What families that write a dataset's rows in bulk (trace landings, live landing, retention) ask
 * of the datasets family, in the caller's bounded units of work (every method joins the open one):
 * finding or creating the target, locking it, reserving the version being written, appending rows
 * (COPY-staged, or from the caller's own statement), measuring and counting them, deleting expired
 * ones, and reading a version's spans. Versions are recorded through DatasetsService.createVersion.
 */
@Injectable()
export class DatasetWritesService {
  constructor(
    private readonly db: Db,
    private readonly datasets: DatasetsRepository,
    private readonly rows: RowsRepository,
    private readonly spans: SpanRowsRepository,
  ) {}

  // The dataset and its reservation

  /**
   * The id of the workspace's dataset of this name (compared case-insensitively), created with
   * `kind` when there is none; null when a dataset of another kind has the name. Inside a unit of
   * work: concurrent first uses of one name create one dataset.
   */
  async findOrCreateByName(
    workspaceId: string,
    name: string,
    fields: Pick<DatasetEntity, 'kind' | 'description' | 'tags' | 'createdBy'>,
  ): Promise<string | null> {
    const find = async () => {
      const existing = await this.datasets.findByName(workspaceId, name);
      return existing ? (existing.kind === fields.kind ? existing.id : null) : undefined;
    };
    // The lock is only for creating: most callers (every OTLP export names its dataset) find it.
    const found = await find();
    if (found !== undefined) return found;
    await this.db.lock(`dataset-name:${workspaceId}:${name.toLowerCase()}`);
    const raced = await find();
    if (raced !== undefined) return raced;
    return (await this.datasets.insert({ workspaceId, name, ...fields })).id;
  }

  /** The dataset, locked `FOR NO KEY UPDATE` against other writers of it (rows referencing it go on being inserted). */
  lock(datasetId: string): Promise<DatasetEntity | null> {
    return this.datasets.findForUpdateUnscoped(datasetId);
  }

  /** The version number a landing is writing (its rows are readable by no one yet), or null. */
  writingVersion(datasetId: string): Promise<number | null> {
    return this.datasets.writingVersion(datasetId);
  }

  /** Reserves version `number` for a landing: nobody else may make it (DatasetsService.createVersion answers 409 dataset_busy). */
  reserve(datasetId: string, number: number): Promise<void> {
    return this.datasets.setWritingVersion(datasetId, number);
  }

  /** Releases the reservation of `number` (none other). */
  release(datasetId: string, number: number): Promise<void> {
    return this.datasets.setWritingVersion(datasetId, null, number);
  }

  /** Moves the dataset's counters: its newest version number, the ordinal its next row gets. */
  setCounters(datasetId: string, counters: { latestVersion?: number; nextOrdinal?: number }): Promise<void> {
    return this.datasets.setCounters(datasetId, counters);
  }

  // Versions

  version(versionId: string): Promise<DatasetVersionEntity | null> {
    return this.datasets.findVersionByIdUnscoped(versionId);
  }

  versionByNumber(workspaceId: string, datasetId: string, number: number): Promise<DatasetVersionEntity | null> {
    return this.datasets.findVersionByNumber(workspaceId, datasetId, number);
  }

  lockVersion(datasetId: string, versionId: string): Promise<DatasetVersionEntity | null> {
    return this.datasets.findVersionForUpdate(datasetId, versionId);
  }

  /** Adds rows to a version's row count (a live head growing; its statistics follow when it is sealed). */
  growVersion(versionId: string, rows: number): Promise<void> {
    return this.datasets.addVersionRows(versionId, rows);
  }

  // Rows

  /** Rows ([row_id, ordinal, jsonb text]) COPY-staged, then written under `number` unless the dataset shows them already. */
  appendNew(datasetId: string, number: number, rows: BulkValue[][]): Promise<void> {
    return this.spans.appendNew(datasetId, number, rows);
  }

  /**
   * Rows ([row_id, ordinal, jsonb text]) COPYed straight into version `number`: for a writer that
   * knows none of them is in the dataset or repeated (TraceLanding's first landing into an empty
   * dataset); a repeated row id fails the COPY on the primary key.
   */
  async appendFresh(datasetId: string, number: number, rows: Array<[string, number, string]>): Promise<void> {
    await this.rows.append(datasetId, number, [rows]);
  }

  /** Whether the dataset holds any row at all (in any version, or written under a reserved number). */
  holdsRows(datasetId: string): Promise<boolean> {
    return this.spans.holdsRows(datasetId);
  }

  /** The rows the caller's statement yields, written under `number` in that same statement (one round trip). */
  appendFrom(
    datasetId: string,
    number: number,
    firstOrdinal: number,
    source: RowSource,
  ): Promise<{ taken: number; landed: number }> {
    return this.spans.appendFrom(datasetId, number, firstOrdinal, source);
  }

  countAddedIn(datasetId: string, number: number): Promise<number> {
    return this.spans.countAddedIn(datasetId, number);
  }

  /** Deletes up to `limit` rows written under `number` (an abandoned landing's); answers how many. */
  deleteAddedIn(datasetId: string, number: number, limit: number): Promise<number> {
    return this.spans.deleteAddedIn(datasetId, number, limit);
  }

  /**
   * Deletes up to `limit` spans that started before `cutoff` from every version (the caller holds
   * the dataset's lock); the row counts of the versions that lost rows follow at once, their
   * hashes and statistics when the caller restats them (DatasetsService.restat). Answers how many
   * were deleted and the numbers of the versions that lost rows.
   */
  async deleteSpansBefore(
    datasetId: string,
    cutoff: Date,
    limit: number,
  ): Promise<{ deleted: number; versions: number[] }> {
    const { deleted, lost } = await this.spans.deleteStartedBefore(datasetId, cutoff, limit);
    for (const { number, rows } of lost) await this.datasets.shrinkVersion(datasetId, number, rows);
    return { deleted, versions: lost.map((l) => l.number) };
  }

  /** The datasets of kind `traces` in these workspaces (every workspace when null). */
  traceDatasets(workspaceIds: string[] | null): Promise<Array<{ workspace_id: string; dataset_id: string }>> {
    return this.datasets.ofKind('traces', workspaceIds);
  }

  // Measuring rows under a number (before its version record exists)

  contentHash(datasetId: string, number: number): Promise<{ rowCount: number; sha256: string }> {
    return this.rows.contentHash(datasetId, number);
  }

  distinctCounts(datasetId: string, number: number, only?: string[]): Promise<Record<string, number>> {
    return this.rows.distinctCounts(datasetId, number, only);
  }

  versionStats(
    datasetId: string,
    number: number,
    columnOrder: string[],
    rowCount: number,
  ): ReturnType<RowsRepository['versionStats']> {
    return this.rows.versionStats(datasetId, number, columnOrder, rowCount);
  }

  // A version's spans

  /** The version's spans in pages, by trace then row order (what topology and enrichment read). */
  spansByTrace(datasetId: string, versionNumber: number): AsyncGenerator<Array<Record<string, unknown>>> {
    return this.spans.spansByTrace(datasetId, versionNumber);
  }

  countTraces(datasetId: string, versionNumber: number): Promise<number> {
    return this.spans.countTraces(datasetId, versionNumber);
  }

  knownTraces(datasetId: string, versionNumber: number, traceIds: string[]): Promise<Set<string>> {
    return this.spans.knownTraces(datasetId, versionNumber, traceIds);
  }
}
