import { Injectable } from '@nestjs/common';
import { DummyValue, GenerateSql } from '#libs/database/generate-sql.js';
import { DatasetVersionEntity, type VersionState } from './entities/dataset-version.entity.js';
import { DatasetEntity, type DatasetKind } from './entities/dataset.entity.js';
import { sql, type Selectable } from 'kysely';
import type { Datasets, DatasetVersions } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';
import { nameTaken } from '#libs/database/record-queries.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';
import {
  direction,
  entityList,
  entityPage,
  holds,
  isAnyOf,
  lowerContains,
  type PageWindow,
} from '#libs/database/typed-fragments.js';

export interface DatasetListFilter {
  workspaceId?: string;
  /** When no workspace is named: the workspaces the caller belongs to (undefined: every one, for system admins). */
  workspaceIds?: string[];
  q?: string;
  kind?: DatasetKind;
  tag?: string;
}

/** What a list of datasets sorts by (then by id), and which way. */
export interface DatasetSort {
  column: 'name' | 'created_at' | 'updated_at';
  direction: 'ASC' | 'DESC';
}

/** The fields of a dataset that its response shows. */
export type DatasetFields = Pick<
  DatasetEntity,
  | 'id'
  | 'workspaceId'
  | 'name'
  | 'description'
  | 'kind'
  | 'tags'
  | 'currentVersionId'
  | 'createdBy'
  | 'createdAt'
  | 'updatedAt'
  | 'version'
>;
/** The fields of a version that its response shows: of its columns, their names. */
export type VersionFields = Omit<DatasetVersionEntity, 'columns' | 'version' | 'updatedAt'> & {
  columns: Array<{ name: string }>;
};

export interface DatasetView {
  dataset: DatasetFields;
  latest: VersionFields | null;
  counts: { count: number; staged: number };
}

/** The dataset's columns of DATASET_VIEW_SQL. */
type ViewDatasetColumns = Pick<
  Selectable<Datasets>,
  | 'id'
  | 'workspace_id'
  | 'name'
  | 'description'
  | 'tags'
  | 'current_version_id'
  | 'created_by'
  | 'created_at'
  | 'updated_at'
  | 'version'
>;
type ViewVersionColumn =
  | 'number'
  | 'message'
  | 'parent_version_id'
  | 'row_count'
  | 'content_sha256'
  | 'created_by'
  | 'created_at'
  | 'promoted_at'
  | 'retired_at';

/**
 * A row of DATASET_VIEW_SQL: the dataset's columns, then its latest version's prefixed `v_`
 * (null all together when it has none, which `v_id` says). The CHECK-constrained text columns
 * and the JSON ones as the entities read them.
 */
type DatasetViewRow = ViewDatasetColumns & { [K in ViewVersionColumn as `v_${K}`]: Selectable<DatasetVersions>[K] } & {
  kind: DatasetKind;
  version_count: Selectable<Datasets>['latest_version'];
  staged_edits: number;
  v_id: Selectable<DatasetVersions>['id'] | null;
  v_state: VersionState;
  v_source: DatasetVersionEntity['source'];
  v_column_names: string[];
  v_mapping: DatasetVersionEntity['mapping'];
  v_upload: DatasetVersionEntity['upload'];
  v_changes: DatasetVersionEntity['changes'];
};

/**
 * The statement of DatasetsRepository.findView ($1 the dataset, $2 its workspace). Exported for
 * bench/lib/twin.mjs. Versions are numbered 1, 2, … and never deleted, so their count is the
 * latest number, kept on the row (setCounters).
 */
export const DATASET_VIEW_SQL = `SELECT d.id, d.workspace_id, d.name, d.description, d.kind, d.tags, d.current_version_id, d.created_by, d.created_at, d.updated_at, d.version,
          d.latest_version AS version_count,
          (SELECT count(*)::int FROM dataset_staged_edits s WHERE s.dataset_id = d.id) AS staged_edits,
          v.id AS v_id, v.number AS v_number, v.state AS v_state, v.message AS v_message, v.source AS v_source,
          v.parent_version_id AS v_parent_version_id, v.row_count AS v_row_count,
          jsonb_path_query_array(v.columns, '$[*].name') AS v_column_names, v.mapping AS v_mapping,
          v.content_sha256 AS v_content_sha256, v.upload AS v_upload, v.changes AS v_changes, v.created_by AS v_created_by,
          v.created_at AS v_created_at, v.promoted_at AS v_promoted_at, v.retired_at AS v_retired_at
     FROM datasets d LEFT JOIN dataset_versions v ON v.dataset_id = d.id AND v.number = d.latest_version
    WHERE d.id = $1 AND d.workspace_id = $2`;

/** Datasets and their version records (the rows themselves are in RowsRepository). */
@Injectable()
export class DatasetsRepository {
  constructor(private readonly db: Db) {}

  private get datasets() {
    return this.db.repository(DatasetEntity);
  }

  private get versions() {
    return this.db.repository(DatasetVersionEntity);
  }

  private repo() {
    return this.datasets;
  }

  private versionRepo() {
    return this.versions;
  }

  list(filter: DatasetListFilter, sort: DatasetSort, window: PageWindow): Promise<[DatasetEntity[], number]> {
    return entityPage(
      this.db,
      this.datasets,
      (q) =>
        q
          .selectFrom('datasets')
          .$if(filter.workspaceId !== undefined, (w) => w.where('workspace_id', '=', filter.workspaceId!))
          .$if(filter.workspaceIds !== undefined, (w) =>
            w.where((eb) => isAnyOf(eb, 'workspace_id', filter.workspaceIds!)),
          )
          .$if(!!filter.q, (w) => w.where((eb) => lowerContains(eb, 'name', filter.q!)))
          .$if(!!filter.kind, (w) => w.where('kind', '=', filter.kind!))
          .$if(!!filter.tag, (w) => w.where((eb) => holds(eb, 'tags', filter.tag!))),
      (matching) => matching.orderBy(sort.column, direction(sort)).orderBy('id'),
      window,
    );
  }

  /** The workspace's dataset, or null (also when it belongs to another workspace). */
  find(workspaceId: string, id: string): Promise<DatasetEntity | null> {
    return this.repo().findOne({ where: { id, workspaceId } });
  }

  /**
   * What `GET /datasets/{id}` answers, in one statement: the dataset in its workspace, its
   * version and staged-edit counts, and its latest version with the names of its columns only
   * (not their statistics). Undefined when the workspace holds no such dataset.
   */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID2] })
  async findView(workspaceId: string, id: string): Promise<DatasetView | undefined> {
    const rows = await this.db.prepared<DatasetViewRow>('dataset_view', DATASET_VIEW_SQL, [id, workspaceId]);
    const r = rows[0];
    if (!r) return undefined;
    const dataset = {
      id: r.id,
      workspaceId: r.workspace_id,
      name: r.name,
      description: r.description,
      kind: r.kind,
      tags: r.tags,
      currentVersionId: r.current_version_id,
      createdBy: r.created_by,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      version: r.version,
    };
    const latest =
      r.v_id === null
        ? null
        : {
            id: r.v_id,
            datasetId: r.id,
            workspaceId: r.workspace_id,
            number: r.v_number,
            state: r.v_state,
            message: r.v_message,
            source: r.v_source,
            parentVersionId: r.v_parent_version_id,
            rowCount: r.v_row_count,
            columns: r.v_column_names.map((name) => ({ name })),
            mapping: r.v_mapping,
            contentSha256: r.v_content_sha256,
            upload: r.v_upload,
            changes: r.v_changes,
            createdBy: r.v_created_by,
            createdAt: r.v_created_at,
            promotedAt: r.v_promoted_at,
            retiredAt: r.v_retired_at,
          };
    return { dataset, latest, counts: { count: r.version_count, staged: r.staged_edits } };
  }

  /**
   * Locks the dataset against other writers of it. `FOR NO KEY UPDATE`, not `FOR UPDATE`: rows that
   * only reference the dataset (inbox spans, runs, analysis runs: their foreign-key checks take
   * `FOR KEY SHARE`) go on being inserted meanwhile; every reference cascades or sets null, so a
   * dataset deleted afterwards takes them along.
   */
  findForUpdate(workspaceId: string, id: string): Promise<DatasetEntity | null> {
    return this.datasets.findOne({ where: { id, workspaceId }, lock: { mode: 'for_no_key_update' } });
  }

  /** Workspace-free, for the trace landings' jobs, which name the dataset in their payload (`DatasetWritesService.lock`). */
  findForUpdateUnscoped(id: string): Promise<DatasetEntity | null> {
    return this.datasets.findOne({ where: { id }, lock: { mode: 'for_no_key_update' } });
  }

  /** Of `ids`, those that are not datasets of the workspace. */
  async missing(workspaceId: string, ids: string[]): Promise<string[]> {
    if (!ids.length) return [];
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('datasets')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', sql<string>`ANY(${ids}::uuid[])`),
    );
    const found = new Set(rows.map((r) => r.id));
    return ids.filter((id) => !found.has(id));
  }

  /** The id and kind of the workspace's dataset of this name (compared case-insensitively), or null when there is none. */
  async findByName(workspaceId: string, name: string): Promise<{ id: string; kind: DatasetKind } | null> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('datasets')
        .select(['id', 'kind'])
        .where('workspace_id', '=', workspaceId)
        .where((eb) => eb(eb.fn('lower', ['name']), '=', eb.fn('lower', [eb.val(name)])))
        .$narrowType<{ kind: DatasetKind }>(),
    );
    return rows[0] ?? null;
  }

  /** The datasets of this kind in these workspaces (every workspace when null), by workspace then id. */
  ofKind(
    kind: DatasetKind,
    workspaceIds: string[] | null,
  ): Promise<Array<{ workspace_id: string; dataset_id: string }>> {
    return this.db.typed((q) =>
      q
        .selectFrom('datasets')
        .select(['workspace_id', 'id as dataset_id'])
        .where('kind', '=', kind)
        .$if(workspaceIds !== null, (w) => w.where('workspace_id', '=', sql<string>`ANY(${workspaceIds}::uuid[])`))
        .orderBy('workspace_id')
        .orderBy('id'),
    );
  }

  /** The kind of the workspace's dataset of this name (compared case-insensitively), or null when there is none. */
  async kindByName(workspaceId: string, name: string): Promise<DatasetKind | null> {
    return (await this.findByName(workspaceId, name))?.kind ?? null;
  }

  async nameTaken(workspaceId: string, name: string, exceptId: string | undefined): Promise<boolean> {
    return nameTaken(this.db, 'datasets', { column: 'workspace_id', value: workspaceId }, name, exceptId);
  }

  async insert(
    dataset: Pick<DatasetEntity, 'workspaceId' | 'name' | 'description' | 'kind' | 'tags' | 'createdBy'>,
  ): Promise<DatasetEntity> {
    const repo = this.datasets;
    const { identifiers } = await repo.insert({ ...dataset, updatedBy: dataset.createdBy });
    return (await repo.findOne({ where: { id: identifiers[0].id as string } }))!;
  }

  save(dataset: DatasetEntity): Promise<DatasetEntity> {
    return this.datasets.save(dataset);
  }

  /** Bumps counters without touching the record's version (ETag) or updated_at. */
  /** The version number a trace landing is writing (its rows are not readable yet), or null. */
  async writingVersion(id: string): Promise<number | null> {
    const rows = await this.db.typed((q) => q.selectFrom('datasets').select('writing_version').where('id', '=', id));
    return rows[0]?.writing_version ?? null;
  }

  /** Reserves version `number` for a landing (null releases the reservation it holds on `number`). */
  async setWritingVersion(id: string, number: number | null, holding?: number): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('datasets')
        .set({ writing_version: number })
        .where('id', '=', id)
        .$if(holding !== undefined, (w) => w.where('writing_version', '=', holding!)),
    );
  }

  async setCounters(id: string, counters: { latestVersion?: number; nextOrdinal?: number }): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('datasets')
        .set((eb) => ({
          latest_version: eb.fn.coalesce(eb.val(counters.latestVersion ?? null), 'latest_version'),
          next_ordinal: eb.fn.coalesce(eb.val(counters.nextOrdinal ?? null), 'next_ordinal'),
        }))
        .where('id', '=', id),
    );
  }

  async setCurrentVersion(id: string, versionId: string | null): Promise<void> {
    await this.db.typedWrite((q) =>
      q.updateTable('datasets').set({ current_version_id: versionId }).where('id', '=', id),
    );
  }

  async delete(id: string): Promise<void> {
    await this.datasets.delete({ id });
  }

  // Versions

  insertVersion(version: Partial<DatasetVersionEntity>): Promise<DatasetVersionEntity> {
    const repo = this.versions;
    return repo.save(repo.create(version));
  }

  saveVersion(version: DatasetVersionEntity): Promise<DatasetVersionEntity> {
    return this.versions.save(version);
  }

  findVersion(workspaceId: string, datasetId: string, versionId: string): Promise<DatasetVersionEntity | null> {
    return this.versionRepo().findOne({ where: { id: versionId, datasetId, workspaceId } });
  }

  findVersionById(workspaceId: string, versionId: string): Promise<DatasetVersionEntity | null> {
    return this.versions.findOne({ where: { id: versionId, workspaceId } });
  }

  /** Workspace-free, for a signed download URL and the live landing's job, which hold no workspace. */
  findVersionByIdUnscoped(versionId: string): Promise<DatasetVersionEntity | null> {
    return this.versions.findOne({ where: { id: versionId } });
  }

  /** Adds rows to a version's count (a live head growing by a batch). */
  async addVersionRows(versionId: string, rows: number): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('dataset_versions')
        .set((eb) => ({ row_count: eb('row_count', '+', rows) }))
        .where('id', '=', versionId),
    );
  }

  /** Takes rows from a version's count (spans deleted by retention); answers the version's id, or null when there is none. */
  async shrinkVersion(datasetId: string, number: number, rows: number): Promise<string | null> {
    const [row] = await this.db.typed((q) =>
      q
        .updateTable('dataset_versions')
        .set((eb) => ({ row_count: eb.fn('greatest', [eb('row_count', '-', rows), eb.lit(0)]) }))
        .where('dataset_id', '=', datasetId)
        .where('number', '=', number)
        .returning('id'),
    );
    return row?.id ?? null;
  }

  findVersionForUpdate(datasetId: string, versionId: string): Promise<DatasetVersionEntity | null> {
    return this.versions.findOne({ where: { id: versionId, datasetId }, lock: { mode: 'for_no_key_update' } });
  }

  findVersionByNumber(workspaceId: string, datasetId: string, number: number): Promise<DatasetVersionEntity | null> {
    return this.versionRepo().findOne({ where: { datasetId, number, workspaceId } });
  }

  findCurrentVersion(datasetId: string): Promise<DatasetVersionEntity | null> {
    return this.versions.findOne({ where: { datasetId, state: 'current' }, lock: { mode: 'for_no_key_update' } });
  }

  listVersions(datasetId: string, state: VersionState | undefined, window: { skip: number; take: number }) {
    return entityPage(
      this.db,
      this.versions,
      (q) =>
        q
          .selectFrom('dataset_versions')
          .where('dataset_id', '=', datasetId)
          .$if(state !== undefined, (query) => query.where('state', '=', state!)),
      (query) => query.orderBy('number', 'desc'),
      window,
    );
  }

  allVersions(datasetId: string): Promise<DatasetVersionEntity[]> {
    return entityList(
      this.db,
      this.versions,
      (q) => q.selectFrom('dataset_versions').where('dataset_id', '=', datasetId),
      (query) => query.orderBy('number', 'desc'),
    );
  }

  /** Version counts and newest versions of several datasets at once (for list pages). */
  async versionSummaries(datasetIds: string[]): Promise<Map<string, { count: number; staged: number }>> {
    if (!datasetIds.length) return new Map();
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('datasets as d')
        .select((eb) => [
          'd.id',
          eb
            .selectFrom('dataset_versions as v')
            .select(sql<number>`count(*)::int`.as('n'))
            .whereRef('v.dataset_id', '=', 'd.id')
            .$asScalar()
            .$notNull()
            .as('count'),
          eb
            .selectFrom('dataset_staged_edits as s')
            .select(sql<number>`count(*)::int`.as('n'))
            .whereRef('s.dataset_id', '=', 'd.id')
            .$asScalar()
            .$notNull()
            .as('staged'),
        ])
        .where('d.id', '=', sql<string>`ANY(${datasetIds}::uuid[])`),
    );
    return new Map(rows.map((r) => [r.id, { count: r.count, staged: r.staged }]));
  }

  /** The newest version of each dataset given. */
  async latestVersions(datasetIds: string[]): Promise<DatasetVersionEntity[]> {
    if (!datasetIds.length) return [];
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('dataset_versions as v')
        .innerJoin('datasets as d', (join) =>
          join.onRef('d.id', '=', 'v.dataset_id').onRef('d.latest_version', '=', 'v.number'),
        )
        .selectAll('v')
        .where('v.dataset_id', 'in', datasetIds),
    );
    return entitiesFrom(this.versions, rows);
  }
}
