import type { QueryCreator } from 'kysely';
import type { DB, Json } from '#libs/database/schema.js';
import type { DatasetVersionEntity } from './entities/dataset-version.entity.js';

/**
 * The values another family and DatasetWritesService exchange to write a dataset's rows: typed
 * values and typed query builders, never SQL text (test/architecture/layering.spec.ts checks it).
 */

/** A row a RowSource yields: its id, its data, and its place in the source's order (1, 2, …). */
export interface SourcedRow {
  row_id: string;
  data: Json;
  place: string;
}

/** The relation a RowSource's rows are read from: its last common table expression. */
export interface SourcedRows {
  sourced_rows: SourcedRow;
}

/**
 * Rows another family's statement yields, appended in that same statement (one round trip, no row
 * shipped to node and back): given the query creator, the source adds its own common table
 * expressions over its own tables (they may delete what they yield: data-modifying ones stand at
 * the top level), the last of them named `sourced_rows`; DatasetWritesService.appendFrom goes on
 * with its own and runs the statement.
 */
export type RowSource = (q: QueryCreator<DB>) => QueryCreator<DB & SourcedRows>;

/**
 * A version number held for a writer whose rows take several transactions (DatasetWritesService
 * reserveNextVersion), with the ordinal its first row gets. Nobody else makes that version
 * meanwhile (DatasetsService.createVersion answers 409 dataset_busy). The writer keeps it (to
 * resume after a crash) and hands it back; it never computes numbers or ordinals from it.
 */
export interface VersionReservation {
  datasetId: string;
  number: number;
  firstOrdinal: number;
}

/**
 * A row a reservation's writer hands over: its id, its place in the writer's order (0, 1, … across
 * all its batches: the datasets family turns places into ordinals) and its data as jsonb text.
 */
export type PlacedRow = [rowId: string, place: number, data: string];

/** The version rows go into when DatasetWritesService.appendFrom opens one: what the writer says of it. */
export interface NextVersion {
  /** Columns that come first; the newest version's other columns follow in their order. */
  leadingColumns: string[];
  fields: Pick<DatasetVersionEntity, 'source' | 'message'>;
  createdBy: string | null;
  /** The mapping the version gets when none carries over from its parent. */
  mapping: DatasetVersionEntity['mapping'];
}
