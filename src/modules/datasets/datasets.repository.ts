import { Injectable } from '@nestjs/common';
import { DatasetVersionEntity, type VersionState } from './entities/dataset-version.entity.js';
import { DatasetEntity, type DatasetKind } from './entities/dataset.entity.js';
import { Db } from '../../../libs/database/unit-of-work.js';
import { containsPattern } from '../../../libs/database/like.js';

export interface DatasetListFilter {
  workspaceId?: string;
  /** When no workspace is named: the workspaces the caller belongs to (undefined: every one, for system admins). */
  memberOf?: string;
  q?: string;
  kind?: DatasetKind;
  tag?: string;
}

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

  async list(filter: DatasetListFilter, sort: { column: string; direction: 'ASC' | 'DESC' }, window: { skip: number; take: number }) {
    const qb = this.datasets.createQueryBuilder('d');
    if (filter.workspaceId) qb.andWhere('d.workspace_id = :workspaceId', { workspaceId: filter.workspaceId });
    if (filter.memberOf) qb.andWhere('d.workspace_id IN (SELECT m.workspace_id FROM workspace_members m WHERE m.user_id = :userId)', { userId: filter.memberOf });
    if (filter.q) qb.andWhere('lower(d.name) LIKE :pattern', { pattern: containsPattern(filter.q.toLowerCase()) });
    if (filter.kind) qb.andWhere('d.kind = :kind', { kind: filter.kind });
    if (filter.tag) qb.andWhere(':tag = ANY(d.tags)', { tag: filter.tag });
    return qb.orderBy(sort.column, sort.direction).addOrderBy('d.id', 'ASC').skip(window.skip).take(window.take).getManyAndCount();
  }

  find(id: string): Promise<DatasetEntity | null> {
    return this.repo().findOne({ where: { id } });
  }

  findForUpdate(id: string): Promise<DatasetEntity | null> {
    return this.datasets.findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  async workspaceOf(id: string): Promise<string | null> {
    const rows: Array<{ workspace_id: string }> = await this.datasets.query('SELECT workspace_id FROM datasets WHERE id = $1', [id]);
    return rows[0]?.workspace_id ?? null;
  }

  async workspaceOfVersion(id: string): Promise<string | null> {
    const rows: Array<{ workspace_id: string }> = await this.versions.query('SELECT workspace_id FROM dataset_versions WHERE id = $1', [id]);
    return rows[0]?.workspace_id ?? null;
  }

  async nameTaken(workspaceId: string, name: string, exceptId: string | undefined): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      'SELECT 1 FROM datasets WHERE workspace_id = $1 AND lower(name) = lower($2) AND id IS DISTINCT FROM $3',
      [workspaceId, name, exceptId ?? null],
    );
    return rows.length > 0;
  }

  async insert(dataset: Pick<DatasetEntity, 'workspaceId' | 'name' | 'description' | 'kind' | 'tags' | 'createdBy'>): Promise<DatasetEntity> {
    const repo = this.datasets;
    const { identifiers } = await repo.insert({ ...dataset, updatedBy: dataset.createdBy });
    return (await repo.findOne({ where: { id: identifiers[0].id as string } }))!;
  }

  save(dataset: DatasetEntity): Promise<DatasetEntity> {
    return this.datasets.save(dataset);
  }

  /** Bumps counters without touching the record's version (ETag) or updated_at. */
  async setCounters(id: string, counters: { latestVersion?: number; nextOrdinal?: number }): Promise<void> {
    await this.db.query(
      'UPDATE datasets SET latest_version = COALESCE($2, latest_version), next_ordinal = COALESCE($3, next_ordinal) WHERE id = $1',
      [id, counters.latestVersion ?? null, counters.nextOrdinal ?? null],
    );
  }

  async setCurrentVersion(id: string, versionId: string | null): Promise<void> {
    await this.db.query('UPDATE datasets SET current_version_id = $2 WHERE id = $1', [id, versionId]);
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

  findVersion(datasetId: string, versionId: string): Promise<DatasetVersionEntity | null> {
    return this.versionRepo().findOne({ where: { id: versionId, datasetId } });
  }

  findVersionById(versionId: string): Promise<DatasetVersionEntity | null> {
    return this.versions.findOne({ where: { id: versionId } });
  }

  findVersionForUpdate(datasetId: string, versionId: string): Promise<DatasetVersionEntity | null> {
    return this.versions.findOne({ where: { id: versionId, datasetId }, lock: { mode: 'pessimistic_write' } });
  }

  findVersionByNumber(datasetId: string, number: number): Promise<DatasetVersionEntity | null> {
    return this.versionRepo().findOne({ where: { datasetId, number } });
  }

  findCurrentVersion(datasetId: string): Promise<DatasetVersionEntity | null> {
    return this.versions.findOne({ where: { datasetId, state: 'current' }, lock: { mode: 'pessimistic_write' } });
  }

  listVersions(datasetId: string, state: VersionState | undefined, window: { skip: number; take: number }) {
    return this.versions.findAndCount({ where: { datasetId, ...(state ? { state } : {}) }, order: { number: 'DESC' }, skip: window.skip, take: window.take });
  }

  allVersions(datasetId: string): Promise<DatasetVersionEntity[]> {
    return this.versions.find({ where: { datasetId }, order: { number: 'DESC' } });
  }

  /** Version counts and newest versions of several datasets at once (for list pages). */
  async versionSummaries(datasetIds: string[]): Promise<Map<string, { count: number; staged: number }>> {
    if (!datasetIds.length) return new Map();
    const rows: Array<{ id: string; count: number; staged: number }> = await this.datasets.query(
      `SELECT d.id,
              (SELECT count(*)::int FROM dataset_versions v WHERE v.dataset_id = d.id) AS count,
              (SELECT count(*)::int FROM dataset_staged_edits s WHERE s.dataset_id = d.id) AS staged
         FROM datasets d WHERE d.id = ANY($1::uuid[])`,
      [datasetIds],
    );
    return new Map(rows.map((r) => [r.id, { count: r.count, staged: r.staged }]));
  }

  latestVersions(datasetIds: string[]): Promise<DatasetVersionEntity[]> {
    if (!datasetIds.length) return Promise.resolve([]);
    return this.versions
      .createQueryBuilder('v')
      .innerJoin(DatasetEntity, 'd', 'd.id = v.dataset_id AND d.latest_version = v.number')
      .where('v.dataset_id IN (:...ids)', { ids: datasetIds })
      .getMany();
  }
}
