import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, ValidationFailedError } from '#libs/common/domain-error.js';
import { allOf, rowIdIn, type Filter } from '#libs/database/query-language.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { DatasetErrors } from '../datasets.errors.js';
import { rowObject } from '../datasets.mapper.js';
import { DatasetsService } from '../datasets.service.js';
import {
  type CountedVersion,
  carriesAnyOf,
  type DimensionCount,
  DimensionsRepository,
  type PairCount,
} from './dimensions.repository.js';

export type { CountedVersion, DimensionCount, PairCount } from './dimensions.repository.js';
import type {
  AssignDimensionRequest,
  AssignDimensionResponse,
  DatasetDimensionsQueryResponse,
  DatasetDimensionsResponse,
  DimensionsQueryRequest,
  DimensionValuesResponse,
} from '../dto/dimensions.dto.js';
import type { DatasetVersionEntity } from '../entities/dataset-version.entity.js';
import { QueryService } from '../rows/query.service.js';
import { RowsRepository } from '../rows/rows.repository.js';

export interface RowSelection {
  /** A filter over the version's rows, alias `r` (dataset_rows or `dataset_version_rows()`). */
  where: Filter;
}

/** Dimensions: the axes a team wants coverage on, their values, and which rows carry which value. */
@Injectable()
export class DimensionsService {
  constructor(
    private readonly dimensions: DimensionsRepository,
    private readonly datasetsService: DatasetsService,
    private readonly rows: RowsRepository,
    private readonly query: QueryService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  /** Assigns a value to explicit rows or to every row a rule matches; creates the dimension and value on first use. */
  async assign(
    access: WorkspaceAccess,
    datasetId: string,
    body: AssignDimensionRequest,
    caller: Principal,
  ): Promise<AssignDimensionResponse> {
    if ((body.row_ids === undefined) === (body.rule === undefined)) {
      throw new ValidationFailedError('Give either row_ids or rule', [
        { field: body.row_ids ? 'rule' : 'row_ids', message: 'exactly one of row_ids and rule is required' },
      ]);
    }
    const dataset = await this.datasetsService.require(access, datasetId);
    const version = await this.datasetsService.resolveVersion(dataset, body.version_id);
    let selection: RowSelection;
    if (body.row_ids) {
      const ids = [...new Set(body.row_ids.map((id) => id.toLowerCase()))];
      const found = await this.rows.existing(datasetId, version.number, ids);
      const missing = ids.filter((id) => !found.has(id));
      if (missing.length)
        throw new DomainError(DatasetErrors.row_not_found, `Version ${version.number} has no row ${missing[0]}`, {
          row_ids: missing,
        });
      selection = { where: rowIdIn(this.query.context(version), ids) };
    } else {
      selection = { where: this.query.compileWith(this.query.context(version), body.rule, '/rule') };
    }
    return this.transactions.run(async () => {
      await this.datasetsService.requireLocked(access, datasetId);
      const created = await this.dimensions.ensure(datasetId, body.dimension, body.value, body.description ?? '');
      const counts = await this.dimensions.assign({
        datasetId,
        version: version.number,
        dimension: body.dimension,
        value: body.value,
        userId: caller.userId,
        ...selection,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'dimension.assigned',
        targetType: 'dataset',
        targetId: datasetId,
        details: {
          dimension: body.dimension,
          value: body.value,
          version_id: version.id,
          ...(body.rule ? { rule: body.rule } : { row_ids: body.row_ids!.slice(0, 100) }),
          ...counts,
        },
      });
      return {
        dataset_id: datasetId,
        version_id: version.id,
        dimension: body.dimension,
        value: body.value,
        assigned: counts.assigned,
        reassigned: counts.reassigned,
        created_dimension: created.createdDimension,
        created_value: created.createdValue,
      };
    });
  }

  async summary(dataset: { id: string }, version: DatasetVersionEntity): Promise<DatasetDimensionsResponse> {
    const [definitions, counts] = await Promise.all([
      this.dimensions.definitions(dataset.id),
      this.dimensions.counts(dataset.id, version.number),
    ]);
    return {
      dataset_id: dataset.id,
      version_id: version.id,
      row_count: version.rowCount,
      dimensions: definitions.map((d) => {
        const mine = counts.filter((c) => c.dimension === d.name);
        const assigned = mine.reduce((sum, c) => sum + c.count, 0);
        const counted = new Map(mine.map((c) => [c.value, c.count]));
        const values = [...d.values.map((value) => ({ value, count: counted.get(value) ?? 0 }))].sort(
          (a, b) => b.count - a.count || a.value.localeCompare(b.value),
        );
        return {
          name: d.name,
          description: d.description,
          values,
          assigned_rows: assigned,
          unassigned_rows: version.rowCount - assigned,
        };
      }),
    };
  }

  async values(
    dataset: { id: string },
    version: DatasetVersionEntity,
    dimension: string | undefined,
  ): Promise<DimensionValuesResponse> {
    if (dimension !== undefined) await this.assertKnown(dataset.id, [dimension]);
    const counts = await this.dimensions.counts(dataset.id, version.number);
    return {
      dataset_id: dataset.id,
      version_id: version.id,
      row_count: version.rowCount,
      values: counts
        .filter((c) => dimension === undefined || c.dimension === dimension)
        .map((c) => ({
          dimension: c.dimension,
          value: c.value,
          count: c.count,
          share: version.rowCount ? c.count / version.rowCount : 0,
        })),
    };
  }

  async queryRows(
    dataset: { id: string },
    version: DatasetVersionEntity,
    body: DimensionsQueryRequest,
  ): Promise<DatasetDimensionsQueryResponse> {
    await this.assertKnown(dataset.id, [...Object.keys(body.dimensions ?? {}), ...(body.group_by ?? [])]);
    const selection = this.select(version, body.dimensions, body.filter);
    const limit = body.limit ?? 50;
    const offset = body.offset ?? 0;
    const [total, groups, rows] = await Promise.all([
      this.dimensions.countMatching(dataset.id, version.number, selection.where),
      this.dimensions.groups(dataset.id, version.number, selection.where, body.group_by ?? []),
      limit ? this.dimensions.rows(dataset.id, version.number, selection.where, limit, offset) : Promise.resolve([]),
    ]);
    return {
      dataset_id: dataset.id,
      version_id: version.id,
      total,
      groups,
      items: rows.map((r) => ({ ...rowObject(r.row_id, r.data), _dimensions: r.dims })),
      limit,
      offset,
    };
  }

  /**
   * The rows of a version that carry one of the given values of every dimension named and match
   * the filter: a filter over alias `r`.
   */
  select(
    version: DatasetVersionEntity,
    dimensionValues: Record<string, unknown> | undefined,
    filter: unknown,
  ): RowSelection {
    const clauses: Filter[] = [];
    for (const [name, values] of Object.entries(dimensionValues ?? {})) {
      if (
        !Array.isArray(values) ||
        !values.length ||
        values.length > 1000 ||
        !values.every((v) => typeof v === 'string')
      ) {
        throw new ValidationFailedError(
          `dimension values of "${name}" must be a non-empty array of at most 1000 strings`,
          [{ field: `dimensions.${name}`, message: 'a non-empty array of strings' }],
        );
      }
      clauses.push(carriesAnyOf(name, values as string[]));
    }
    if (filter !== undefined && filter !== null)
      clauses.push(this.query.compileWith(this.query.context(version), filter, '/filter'));
    return { where: allOf(clauses) };
  }

  // For other families (a project's coverage): counts across the workspace's datasets, each at its
  // counted version (the current one, else the latest).

  /** The counted version of each dataset named (those of the workspace), with its visible rows, by name. */
  countedVersions(workspaceId: string, datasetIds: string[]): Promise<CountedVersion[]> {
    return this.dimensions.countedVersions(workspaceId, datasetIds);
  }

  /** Rows per (dimension, value) over the counted versions, for the dimensions given. */
  valueCounts(workspaceId: string, datasetIds: string[], dimensions: string[]): Promise<DimensionCount[]> {
    return this.dimensions.valueCounts(workspaceId, datasetIds, dimensions);
  }

  /** Rows per pair of values of dimensions `a` and `b` over the counted versions. */
  pairCounts(workspaceId: string, datasetIds: string[], a: string, b: string): Promise<PairCount[]> {
    return this.dimensions.pairCounts(workspaceId, datasetIds, a, b);
  }

  async assertKnown(datasetId: string, names: string[]): Promise<void> {
    if (!names.length) return;
    const defined = new Set((await this.dimensions.definitions(datasetId)).map((d) => d.name));
    const unknown = [...new Set(names)].filter((n) => !defined.has(n));
    if (unknown.length) {
      throw new DomainError(
        DatasetErrors.unknown_dimension,
        `The dataset has no dimension ${unknown.map((n) => `"${n}"`).join(', ')}`,
        { unknown, available: [...defined] },
      );
    }
  }
}
