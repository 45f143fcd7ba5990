import { Injectable } from '@nestjs/common';
import { DomainError } from '#libs/common/domain-error.js';
import { everyRow, type Filter } from '#libs/database/query-language.js';
import { DatasetErrors } from './datasets.errors.js';
import { DatasetsRepository } from './datasets.repository.js';
import { DimensionsService } from './dimensions/dimensions.service.js';
import type { ColumnMapping } from './entities/dataset-version.entity.js';
import { PartitionsRepository } from './dimensions/partitions.repository.js';

/**
 * The rows a run executes: those of `dataset_version_rows(datasetId, versionNumber)`, alias `r`,
 * that `where` selects (a filter the datasets family compiled: its values bound, its SQL built here).
 */
export interface RunSource {
  datasetId: string;
  datasetName: string;
  versionId: string;
  versionNumber: number;
  partitionId: string | null;
  mapping: ColumnMapping;
  where: Filter;
}

/** What runs (and other families that execute rows) ask of datasets: a version or partition, checked, as a row selection. */
@Injectable()
export class RunSourceService {
  constructor(
    private readonly datasets: DatasetsRepository,
    private readonly partitions: PartitionsRepository,
    private readonly dimensions: DimensionsService,
  ) {}

  /** The dataset's given version (default: its current version, else its newest), or a partition of it. */
  async resolve(workspaceId: string, datasetId: string, versionId?: string, partitionId?: string): Promise<RunSource> {
    const dataset = await this.datasets.find(workspaceId, datasetId);
    const unknown = (detail: string, field: string) =>
      new DomainError(DatasetErrors.unknown_row_source, detail, { field });
    if (!dataset) throw unknown(`Workspace ${workspaceId} has no dataset ${datasetId}`, 'dataset_id');
    const version = versionId
      ? await this.datasets.findVersion(workspaceId, datasetId, versionId)
      : dataset.currentVersionId
        ? await this.datasets.findVersion(workspaceId, datasetId, dataset.currentVersionId)
        : (await this.datasets.latestVersions([datasetId]))[0];
    if (!version)
      throw versionId
        ? unknown(`Dataset ${dataset.name} has no version ${versionId}`, 'version_id')
        : unknown(`Dataset ${dataset.name} has no version yet`, 'dataset_id');
    let selection = { where: everyRow() };
    if (partitionId) {
      const partition = await this.partitions.find(version.id, partitionId);
      if (!partition)
        throw unknown(`Version ${version.number} of ${dataset.name} has no partition ${partitionId}`, 'partition_id');
      selection = this.dimensions.select(version, partition.dimension_values, partition.filter ?? undefined);
    }
    return {
      datasetId,
      datasetName: dataset.name,
      versionId: version.id,
      versionNumber: version.number,
      partitionId: partitionId ?? null,
      mapping: version.mapping,
      ...selection,
    };
  }
}
