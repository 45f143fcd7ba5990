import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { metricAvailability } from '#libs/evaluation/metric-catalogue.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { DatasetErrors } from '../datasets.errors.js';
import { rowObject, toPartitionResponse } from '../datasets.mapper.js';
import { DimensionsRepository } from './dimensions.repository.js';
import { DimensionsService } from './dimensions.service.js';
import type {
  CreatePartitionRequest,
  DatasetVersionAvailableMetricsResponse,
  PartitionAvailableMetricsResponse,
  PartitionResponse,
  ResolvePartitionQuery,
  SessionPartition,
  SpanPartition,
  TracePartition,
} from '../dto/dimensions.dto.js';
import type { DatasetVersionEntity } from '../entities/dataset-version.entity.js';
import type { DatasetEntity } from '../entities/dataset.entity.js';
import { PartitionsRepository, type PartitionRow } from './partitions.repository.js';
import { RowsRepository } from '../rows/rows.repository.js';

/** Saved slices of a version by dimension values and/or a filter; `resolve` lists their members. */
@Injectable()
export class PartitionsService {
  constructor(
    private readonly partitions: PartitionsRepository,
    private readonly dimensionsService: DimensionsService,
    private readonly dimensions: DimensionsRepository,
    private readonly rows: RowsRepository,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  /** Whether the partition belongs to the workspace's dataset (for families that name one: test plans). */
  isOfDataset(workspaceId: string, datasetId: string, partitionId: string): Promise<boolean> {
    return this.partitions.ofDataset(workspaceId, datasetId, partitionId);
  }

  async create(
    access: WorkspaceAccess,
    dataset: DatasetEntity,
    version: DatasetVersionEntity,
    body: CreatePartitionRequest,
    caller: Principal,
  ): Promise<PartitionResponse> {
    const level = body.level ?? 'session';
    if (level !== 'session' && dataset.kind !== 'traces') {
      throw new DomainError(
        DatasetErrors.level_not_supported,
        `Level ${level} needs a trace dataset; "${dataset.name}" holds test cases, partitioned at session level`,
      );
    }
    await this.dimensionsService.assertKnown(dataset.id, Object.keys(body.dimension_values ?? {}));
    // Compiling proves the filter and dimension values valid before anything is stored.
    this.dimensionsService.select(version, body.dimension_values, body.filter);
    const row = await this.transactions.run(async () => {
      if (await this.partitions.nameTaken(version.id, body.name))
        throw new DomainError(
          DatasetErrors.partition_name_taken,
          `Version ${version.number} already has a partition named "${body.name}"`,
        );
      const created = await this.partitions.insert({
        workspace_id: access.workspaceId,
        dataset_id: dataset.id,
        version_id: version.id,
        name: body.name,
        description: body.description ?? '',
        level,
        dimension_values: body.dimension_values ?? {},
        filter: body.filter ?? null,
        created_by: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'partition.created',
        targetType: 'dataset',
        targetId: dataset.id,
        details: { partition_id: created.id, name: body.name, version_id: version.id },
      });
      return created;
    });
    return this.response(row, version);
  }

  async list(version: DatasetVersionEntity): Promise<PartitionResponse[]> {
    const rows = await this.partitions.list(version.id);
    return Promise.all(rows.map((row) => this.response(row, version)));
  }

  async delete(
    access: WorkspaceAccess,
    datasetId: string,
    version: DatasetVersionEntity,
    partitionId: string,
    caller: Principal,
  ): Promise<void> {
    await this.transactions.run(async () => {
      if (!(await this.partitions.delete(version.id, partitionId))) throw this.notFound(partitionId, version);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'partition.deleted',
        targetType: 'dataset',
        targetId: datasetId,
        details: { partition_id: partitionId, version_id: version.id },
      });
    });
  }

  /** Members of the partition at its level: sessions of rows, or for trace datasets traces (spans grouped by trace_id) or single spans. */
  async resolve(
    version: DatasetVersionEntity,
    partitionId: string,
    query: ResolvePartitionQuery,
  ): Promise<Array<SessionPartition | TracePartition | SpanPartition>> {
    const partition = await this.require(version, partitionId);
    const selection = this.dimensionsService.select(version, partition.dimension_values, partition.filter ?? undefined);
    const withRows = async <T extends { row_ids: string[] }>(members: T[]) => {
      if (!query.include_rows) return members;
      const full = await this.rows.byIds(
        version.datasetId,
        version.number,
        members.flatMap((m) => m.row_ids),
      );
      return members.map((m) => ({ ...m, rows: m.row_ids.map((id) => rowObject(id, full.get(id)!.data)) }));
    };
    if (partition.level === 'trace') {
      const traces = await this.dimensions.traces(
        version.datasetId,
        version.number,
        selection.where,
        query.limit,
        query.offset,
      );
      return withRows(
        traces.map((t) => ({
          level: 'trace' as const,
          trace_id: t.trace_id,
          session_id: t.session_id,
          row_ids: t.row_ids,
        })),
      );
    }
    if (partition.level === 'span') {
      const spans = await this.dimensions.spans(
        version.datasetId,
        version.number,
        selection.where,
        query.limit,
        query.offset,
      );
      return spans.map((s) => ({ level: 'span' as const, span_id: s.span_id, trace_id: s.trace_id, row_id: s.row_id }));
    }
    const sessions = await this.dimensions.sessions(
      version.datasetId,
      version.number,
      selection.where,
      version.mapping.session_id,
      query.limit,
      query.offset,
    );
    return withRows(sessions.map((s) => ({ level: 'session' as const, session_id: s.session_id, row_ids: s.row_ids })));
  }

  availableMetrics(version: DatasetVersionEntity): DatasetVersionAvailableMetricsResponse {
    return {
      dataset_id: version.datasetId,
      version_id: version.id,
      mapping: { ...version.mapping },
      metrics: metricAvailability(version.mapping),
    };
  }

  async partitionMetrics(
    version: DatasetVersionEntity,
    partitionId: string,
  ): Promise<PartitionAvailableMetricsResponse> {
    const partition = await this.response(await this.require(version, partitionId), version);
    return { ...this.availableMetrics(version), partition_id: partition.id, row_count: partition.row_count };
  }

  private async require(version: DatasetVersionEntity, partitionId: string): Promise<PartitionRow> {
    const row = await this.partitions.find(version.id, partitionId);
    if (!row) throw this.notFound(partitionId, version);
    return row;
  }

  private notFound(partitionId: string, version: DatasetVersionEntity): DomainError {
    return new DomainError(
      DatasetErrors.partition_not_found,
      `Version ${version.number} has no partition ${partitionId}`,
    );
  }

  /** The partition's response: the rows it selects in the version counted first, then mapped. */
  private async response(row: PartitionRow, version: DatasetVersionEntity): Promise<PartitionResponse> {
    const selection = this.dimensionsService.select(version, row.dimension_values, row.filter ?? undefined);
    const count = await this.dimensions.countMatching(version.datasetId, version.number, selection.where);
    return toPartitionResponse(row, count);
  }
}
