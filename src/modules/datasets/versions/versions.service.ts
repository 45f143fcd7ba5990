import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { DatasetErrors } from '../datasets.errors.js';
import { toVersionResponse } from '../datasets.mapper.js';
import { DatasetsRepository } from '../datasets.repository.js';
import { DatasetsService } from '../datasets.service.js';
import type {
  DatasetVersionResponse,
  GetDatasetVersionResponse,
  ListVersionsQuery,
  MapVersionRequest,
} from '../dto/dataset.dto.js';
import type { ColumnMapping, DatasetVersionEntity } from '../entities/dataset-version.entity.js';
import type { DatasetEntity } from '../entities/dataset.entity.js';

/**
 * The lifecycle of versions: a new version is a `candidate`; promote makes it the dataset's one
 * `current` version (the previous current goes back to `candidate`); demote retires it.
 */
@Injectable()
export class VersionsService {
  constructor(
    private readonly datasets: DatasetsRepository,
    private readonly datasetsService: DatasetsService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  async list(
    access: WorkspaceAccess,
    datasetId: string,
    query: ListVersionsQuery,
  ): Promise<Page<DatasetVersionResponse>> {
    await this.datasetsService.require(access, datasetId);
    const [rows, total] = await this.datasets.listVersions(datasetId, query.state, pageWindow(query));
    return pageOf(rows, total, query, toVersionResponse);
  }

  /** GET /dataset-versions/{id}: the version with its dataset and schema. */
  async getById(access: WorkspaceAccess, versionId: string): Promise<GetDatasetVersionResponse> {
    const version = await this.findById(access.workspaceId, versionId);
    if (!version) throw new NotFoundError('dataset version', versionId);
    const dataset = (await this.datasets.find(access.workspaceId, version.datasetId))!;
    return {
      ...toVersionResponse(version),
      dataset: { id: dataset.id, name: dataset.name, kind: dataset.kind, current_version_id: dataset.currentVersionId },
      schema: version.columns,
    };
  }

  // For other families (traces): the workspace's versions, or null, so the caller answers in its own terms.

  /** The workspace's version, by id alone. */
  async findById(workspaceId: string, versionId: string): Promise<DatasetVersionEntity | null> {
    return this.datasets.findVersionById(workspaceId, versionId);
  }

  /** The version of the workspace's dataset, by id. */
  async find(workspaceId: string, datasetId: string, versionId: string): Promise<DatasetVersionEntity | null> {
    return this.datasets.findVersion(workspaceId, datasetId, versionId);
  }

  /** The version of the workspace's dataset, by number. */
  async findByNumber(workspaceId: string, datasetId: string, number: number): Promise<DatasetVersionEntity | null> {
    return this.datasets.findVersionByNumber(workspaceId, datasetId, number);
  }

  /** The version of the dataset named in the path, or 404. */
  async require(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
  ): Promise<{ dataset: DatasetEntity; version: DatasetVersionEntity }> {
    const dataset = await this.datasetsService.require(access, datasetId);
    const version = await this.datasets.findVersion(access.workspaceId, datasetId, versionId);
    if (!version)
      throw new DomainError(DatasetErrors.version_not_found, `Dataset ${datasetId} has no version ${versionId}`);
    return { dataset, version };
  }

  /** Locks the dataset, then the version (always in this order), or 404. */
  private async lock(access: WorkspaceAccess, datasetId: string, versionId: string): Promise<DatasetVersionEntity> {
    await this.datasetsService.requireLocked(access, datasetId);
    const version = await this.datasets.findVersionForUpdate(datasetId, versionId);
    if (!version)
      throw new DomainError(DatasetErrors.version_not_found, `Dataset ${datasetId} has no version ${versionId}`);
    return version;
  }

  async promote(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    caller: Principal,
  ): Promise<DatasetVersionResponse> {
    return this.transactions.run(async () => {
      const version = await this.lock(access, datasetId, versionId);
      if (version.state === 'current')
        throw new DomainError(
          DatasetErrors.version_state_conflict,
          `Version ${version.number} is already the current version`,
        );
      const previous = await this.datasets.findCurrentVersion(datasetId);
      if (previous) {
        previous.state = 'candidate';
        await this.datasets.saveVersion(previous);
      }
      const from = version.state;
      version.state = 'current';
      version.promotedAt = new Date();
      version.retiredAt = null;
      const saved = await this.datasets.saveVersion(version);
      await this.datasets.setCurrentVersion(datasetId, version.id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'version.promoted',
        targetType: 'dataset',
        targetId: datasetId,
        details: { version_id: version.id, number: version.number, from, previous_current: previous?.number ?? null },
      });
      return toVersionResponse(saved);
    });
  }

  async demote(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    caller: Principal,
  ): Promise<DatasetVersionResponse> {
    return this.transactions.run(async () => {
      const version = await this.lock(access, datasetId, versionId);
      if (version.state === 'retired')
        throw new DomainError(DatasetErrors.version_state_conflict, `Version ${version.number} is already retired`);
      const from = version.state;
      version.state = 'retired';
      version.retiredAt = new Date();
      const saved = await this.datasets.saveVersion(version);
      if (from === 'current') await this.datasets.setCurrentVersion(datasetId, null);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'version.demoted',
        targetType: 'dataset',
        targetId: datasetId,
        details: { version_id: version.id, number: version.number, from },
      });
      return toVersionResponse(saved);
    });
  }

  /** Records how the version's columns map onto the canonical fields; every column named must exist. */
  async map(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    body: MapVersionRequest,
    caller: Principal,
  ): Promise<DatasetVersionResponse> {
    return this.transactions.run(async () => {
      const version = await this.lock(access, datasetId, versionId);
      const columns = version.columns.map((c) => c.name);
      const named = [body.input, body.expected_output, body.context, body.session_id, ...(body.metadata ?? [])].filter(
        (c): c is string => c !== undefined,
      );
      const unknown = named.filter((c) => !columns.includes(c));
      if (unknown.length) {
        throw new DomainError(
          DatasetErrors.unknown_column,
          `Version ${version.number} has no column ${unknown.map((c) => `"${c}"`).join(', ')}`,
          { unknown, available: columns.slice(0, 200) },
        );
      }
      const mapping: ColumnMapping = {
        ...(body.input !== undefined ? { input: body.input } : {}),
        ...(body.expected_output !== undefined ? { expected_output: body.expected_output } : {}),
        ...(body.context !== undefined ? { context: body.context } : {}),
        ...(body.session_id !== undefined ? { session_id: body.session_id } : {}),
        ...(body.metadata !== undefined ? { metadata: [...new Set(body.metadata)] } : {}),
      };
      const before = version.mapping;
      version.mapping = mapping;
      const saved = await this.datasets.saveVersion(version);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'version.mapped',
        targetType: 'dataset',
        targetId: datasetId,
        details: { version_id: version.id, number: version.number, from: before, to: mapping },
      });
      return toVersionResponse(saved);
    });
  }
}
