import { Injectable } from '@nestjs/common';
import { NotFoundError } from '#libs/common/domain-error.js';
import { timeOrderedUuid } from '#libs/common/time-ordered-uuid.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { DatasetsRepository } from '../datasets.repository.js';
import { DatasetsService } from '../datasets.service.js';
import type { DatasetVersionEntity } from '../entities/dataset-version.entity.js';
import { RowsRepository } from './rows.repository.js';

/** Rows made by another family (synthetic data generation) added as a new candidate version: the newest version's rows plus them, no existing version touched. */
@Injectable()
export class GeneratedRowsService {
  constructor(
    private readonly datasets: DatasetsRepository,
    private readonly datasetsService: DatasetsService,
    private readonly rows: RowsRepository,
    private readonly transactions: TransactionRunner,
  ) {}

  async appendVersion(
    workspaceId: string,
    datasetId: string,
    generated: Array<Record<string, unknown>>,
    message: string,
    createdBy: string | null,
  ): Promise<DatasetVersionEntity> {
    return this.transactions.run(async () => {
      const dataset = await this.datasets.findForUpdate(workspaceId, datasetId);
      if (!dataset) throw new NotFoundError('dataset', datasetId);
      const head = await this.datasets.findVersionByNumber(workspaceId, datasetId, dataset.latestVersion);
      const next = dataset.latestVersion + 1;
      const batch: Array<[string, number, string]> = generated.map((row, i) => [
        timeOrderedUuid(),
        dataset.nextOrdinal + i,
        JSON.stringify(row),
      ]);
      const batches: Array<Array<[string, number, string]>> = [];
      for (let i = 0; i < batch.length; i += 5000) batches.push(batch.slice(i, i + 5000));
      await this.rows.append(datasetId, next, batches);
      const columnOrder = [...(head?.columns.map((c) => c.name) ?? [])];
      for (const row of generated)
        for (const key of Object.keys(row)) if (!columnOrder.includes(key)) columnOrder.push(key);
      const version = await this.datasetsService.createVersion(
        dataset,
        next,
        columnOrder,
        { source: 'generated', message, changes: { inserted: generated.length, updated: 0, deleted: 0 } },
        createdBy,
      );
      await this.datasets.setCounters(datasetId, {
        latestVersion: next,
        nextOrdinal: dataset.nextOrdinal + generated.length,
      });
      return version;
    });
  }
}
