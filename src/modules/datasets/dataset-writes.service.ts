import { Injectable } from '@nestjs/common';
import { Db } from '#libs/database/unit-of-work.js';
import { BulkRowsRepository } from './bulk-rows.repository.js';
import { DatasetsRepository } from './datasets.repository.js';
import { DatasetsService } from './datasets.service.js';
import type { NextVersion, PlacedRow, RowSource, VersionReservation } from './dataset-writes.types.js';
import type { ColumnStats, DatasetVersionEntity } from './entities/dataset-version.entity.js';
import type { DatasetEntity } from './entities/dataset.entity.js';
import type { ColumnStatsCollector } from './ingest/column-stats.js';
import { RowsRepository } from './rows/rows.repository.js';

/** What a reservation's rows hold, read from them before their version is recorded. */
export interface MeasuredRows {
  landed: number;
  content?: { rowCount: number; sha256: string };
  columnStats?: ColumnStats[];
}

/** What a reservation's writer gathered while it wrote (used when every row it placed was written: none repeated). */
export interface GatheredOnTheWay {
  /** How many places the writer used (rows handed over, repeated ones included). */
  placed: number;
  content: { rowCount: number; sha256: string } | null;
  collector: ColumnStatsCollector | null;
}

/**
 * What families that write a dataset's rows in bulk (trace landings, live landing, retention) ask
 * of the datasets family, in the caller's units of work (every method joins the open one). The
 * dataset's version numbers and row ordinals are this family's: a writer whose rows take several
 * transactions reserves the next version (`reserveNextVersion`), hands its rows over with their
 * places in its own order, and has the version recorded or released; a writer inside one
 * transaction appends rows from its own statement to a growing version or to the next one
 * (`appendFrom`). Either way the counters move here, never in the caller.
 */
@Injectable()
export class DatasetWritesService {
  constructor(
    private readonly db: Db,
    private readonly datasets: DatasetsRepository,
    private readonly datasetsService: DatasetsService,
    private readonly rows: RowsRepository,
    private readonly bulk: BulkRowsRepository,
  ) {}

  // The dataset

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

  /** Whether a writer holds a reservation on the dataset (its next version is being written). */
  async isReserved(datasetId: string): Promise<boolean> {
    return (await this.datasets.writingVersion(datasetId)) !== null;
  }

  /** The columns a new version of the dataset has: `leading` first, then the newest version's others in their order. */
  async columnOrder(dataset: DatasetEntity, leading: string[]): Promise<string[]> {
    return leadingThen(leading, await this.newest(dataset));
  }

  // A version written over several transactions

  /**
   * Reserves the dataset's next version for the caller (the dataset as locked in this unit of
   * work); null when another writer holds a reservation (the caller waits and asks again).
   */
  async reserveNextVersion(dataset: DatasetEntity): Promise<VersionReservation | null> {
    if (await this.isReserved(dataset.id)) return null;
    const reservation = { datasetId: dataset.id, number: dataset.latestVersion + 1, firstOrdinal: dataset.nextOrdinal };
    await this.datasets.setWritingVersion(dataset.id, reservation.number);
    return reservation;
  }

  /** Whether `reservation` still holds (a retry after a crash goes on under it). */
  async stillReserved(reservation: VersionReservation): Promise<boolean> {
    return (await this.datasets.writingVersion(reservation.datasetId)) === reservation.number;
  }

  /** Whether the dataset holds any row at all (in any version, or written under a reservation). */
  holdsRows(datasetId: string): Promise<boolean> {
    return this.bulk.holdsRows(datasetId);
  }

  /**
   * Writes rows under the reservation, each row's ordinal its place after the reservation's first.
   * `known`: the writer knows none of them is in the dataset or repeated (a first landing into an
   * empty dataset), so they are COPYed straight in (a repeated row id fails on the primary key);
   * otherwise they are COPY-staged and only those the dataset does not show yet are written.
   */
  async appendReserved(
    reservation: VersionReservation,
    rows: PlacedRow[],
    { known }: { known: boolean },
  ): Promise<void> {
    const { datasetId, number, firstOrdinal } = reservation;
    const ordered = rows.map(([rowId, place, data]): [string, number, string] => [rowId, firstOrdinal + place, data]);
    if (known) await this.rows.append(datasetId, number, [ordered]);
    else await this.bulk.appendNew(datasetId, number, ordered);
  }

  /**
   * What the reservation's rows hold, read from them (without the dataset's lock: nothing else
   * writes under the number): how many were written and, when any were, the version's content
   * hash and column statistics (`columns` in order), those gathered on the way when they hold.
   */
  async measureReserved(
    reservation: VersionReservation,
    columns: string[],
    onTheWay: GatheredOnTheWay,
  ): Promise<MeasuredRows> {
    const { datasetId, number } = reservation;
    const landed = await this.bulk.countAddedIn(datasetId, number);
    if (!landed) return { landed };
    // Every row placed was written once (none repeated): the rows are what was gathered on the way.
    const whole = landed === onTheWay.placed;
    const content = onTheWay.content && whole ? onTheWay.content : await this.rows.contentHash(datasetId, number);
    const { collector } = onTheWay;
    const gathered =
      collector && whole
        ? collector.finish(
            columns,
            landed,
            collector.uncounted().length
              ? await this.rows.distinctCounts(datasetId, number, collector.uncounted())
              : {},
          )
        : undefined;
    const columnStats = gathered ?? (await this.rows.versionStats(datasetId, number, columns, content.rowCount));
    return { landed, content, columnStats };
  }

  /**
   * Records the reservation's version from its measured rows, moves the dataset's counters past it
   * (its number; the ordinals of all `placed` places) and releases the reservation.
   */
  async recordReserved(
    reservation: VersionReservation,
    version: Omit<NextVersion, 'leadingColumns'> & { columns: string[]; measured: MeasuredRows },
    placed: number,
  ): Promise<DatasetVersionEntity> {
    const { datasetId, number, firstOrdinal } = reservation;
    const dataset = (await this.lock(datasetId))!;
    const { landed, content, columnStats } = version.measured;
    const recorded = await this.datasetsService.createVersion(
      dataset,
      number,
      version.columns,
      { ...version.fields, changes: { inserted: landed, updated: 0, deleted: 0 } },
      version.createdBy,
      { gathered: columnStats, content, reserved: true, mapping: version.mapping },
    );
    await this.datasets.setCounters(datasetId, {
      latestVersion: number,
      nextOrdinal: Math.max(dataset.nextOrdinal, firstOrdinal + placed),
    });
    await this.datasets.setWritingVersion(datasetId, null, number);
    return recorded;
  }

  /** Releases the reservation (none other) with no version recorded: the dataset's counters stay. */
  async release(reservation: VersionReservation): Promise<void> {
    await this.lock(reservation.datasetId);
    await this.datasets.setWritingVersion(reservation.datasetId, null, reservation.number);
  }

  /** Deletes up to `limit` rows written under the reservation (an abandoned writer's); answers how many. */
  discardReserved(reservation: VersionReservation, limit: number): Promise<number> {
    return this.bulk.deleteAddedIn(reservation.datasetId, reservation.number, limit);
  }

  // Rows from the caller's statement, in one transaction

  /**
   * Appends the rows `source` yields, in the source's own statement, to `into`: the version still
   * growing (its row count follows), or the next version, recorded when any row was written (its
   * statistics its parent's until DatasetsService.restat reads them from its rows). The ordinals
   * follow the dataset's counter, which moves past every row taken; rows the dataset already shows
   * are taken and not written. The dataset is locked by the caller. Answers how many rows were
   * taken and written, and the version they went to (null when none was recorded).
   */
  async appendFrom(
    dataset: DatasetEntity,
    into: DatasetVersionEntity | NextVersion,
    source: RowSource,
  ): Promise<{ taken: number; landed: number; version: DatasetVersionEntity | null }> {
    const growing = 'id' in into ? into : null;
    const number = growing ? growing.number : dataset.latestVersion + 1;
    const { taken, landed } = await this.bulk.appendFrom(dataset.id, number, source);
    if (!landed || growing) {
      if (growing && landed) await this.datasets.addVersionRows(growing.id, landed);
      return { taken, landed, version: growing };
    }
    const version = await this.openNext(dataset, number, into as NextVersion, { inserted: landed, updated: 0 });
    return { taken, landed, version };
  }

  /** Version `number`, whose rows were just written under it, made the dataset's newest. */
  private async openNext(
    dataset: DatasetEntity,
    number: number,
    next: NextVersion,
    changes: { inserted: number; updated: number },
  ): Promise<DatasetVersionEntity> {
    const parent = await this.newest(dataset);
    const version = await this.datasetsService.createVersion(
      dataset,
      number,
      leadingThen(next.leadingColumns, parent),
      { ...next.fields, changes: { ...changes, deleted: 0 } },
      next.createdBy,
      // Reading its statistics here would read the whole dataset (a version holds its parent's rows) under the lock.
      { gathered: parent?.columns, mapping: next.mapping },
    );
    await this.datasets.setCounters(dataset.id, { latestVersion: number });
    return version;
  }

  /** Of `rowIds`, the rows the dataset shows now, with the version each was written under. */
  currentRows(
    datasetId: string,
    rowIds: string[],
  ): Promise<Array<{ row_id: string; added_in: number; data: Record<string, unknown> }>> {
    return this.bulk.currentByIds(datasetId, rowIds);
  }

  /**
   * New data for rows the dataset shows, in the growing version `into` (a row it holds already is
   * changed in place; a row of an earlier version gets a new record in it, the earlier version
   * unchanged), or in the next version, opened here when any row was revised (as appendFrom does).
   */
  async reviseRows(
    dataset: DatasetEntity,
    into: DatasetVersionEntity | NextVersion,
    rows: Array<{ row_id: string; data: string }>,
  ): Promise<{ revised: number; version: DatasetVersionEntity | null }> {
    const growing = 'id' in into ? into : null;
    const number = growing ? growing.number : dataset.latestVersion + 1;
    const revised = await this.bulk.revise(dataset.id, number, rows);
    if (!revised || growing) return { revised, version: growing };
    const version = await this.openNext(dataset, number, into as NextVersion, { inserted: 0, updated: revised });
    return { revised, version };
  }

  // Versions

  version(versionId: string): Promise<DatasetVersionEntity | null> {
    return this.datasets.findVersionByIdUnscoped(versionId);
  }

  /**
   * Seals a version that grew row by row (a live head): its row count, content hash and column
   * statistics read from its rows. Null when the dataset has no such version.
   */
  async sealVersion(datasetId: string, versionId: string): Promise<DatasetVersionEntity | null> {
    const version = await this.datasets.findVersionForUpdate(datasetId, versionId);
    return version ? this.datasetsService.restat(version) : null;
  }

  // Deleting by age

  /**
   * Deletes up to `limit` rows whose data holds a time under `key` before `cutoff`, from every
   * version (the caller holds the dataset's lock); the row counts of the versions that lost rows
   * follow at once, their hashes and statistics when the caller restats them
   * (DatasetsService.restat). Answers how many were deleted and the numbers of the versions that
   * lost rows.
   */
  async deleteBefore(
    datasetId: string,
    key: string,
    cutoff: Date,
    limit: number,
  ): Promise<{ deleted: number; versions: number[] }> {
    const { deleted, lost } = await this.bulk.deleteBefore(datasetId, key, cutoff, limit);
    for (const { number, rows } of lost) await this.datasets.shrinkVersion(datasetId, number, rows);
    return { deleted, versions: lost.map((l) => l.number) };
  }

  /** Reads the row counts, content hashes and column statistics of the dataset's versions `numbers` from their rows again. */
  async restatVersions(dataset: DatasetEntity, numbers: number[]): Promise<void> {
    for (const number of numbers) {
      const version = await this.datasets.findVersionByNumber(dataset.workspaceId, dataset.id, number);
      if (version) await this.datasetsService.restat(version);
    }
  }

  /** The dataset's newest version, or null before its first. */
  private newest(dataset: DatasetEntity): Promise<DatasetVersionEntity | null> {
    return dataset.latestVersion
      ? this.datasets.findVersionByNumber(dataset.workspaceId, dataset.id, dataset.latestVersion)
      : Promise.resolve(null);
  }
}

/** `leading`, then the columns of `parent` not among them, in its order. */
function leadingThen(leading: string[], parent: DatasetVersionEntity | null): string[] {
  return [...leading, ...(parent?.columns.map((c) => c.name).filter((c) => !leading.includes(c)) ?? [])];
}
