import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, ValidationFailedError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { failureOf } from '#libs/queue/tracked-job.js';
import { TrackedRecords } from '#libs/queue/tracked-records.service.js';
import {
  QualityCheckSelectionError,
  QUALITY_CHECKS,
  runQualityChecks,
  suggestChecks,
  validateSelection,
  type QualityContext,
  type QualityRow,
  type Selection,
} from '../checks/quality-checks.js';
import { DatasetErrors } from '../datasets.errors.js';
import type {
  DataOperationRunResponse,
  DatasetQualityVerdictResponse,
  DatasetSelectableChecksResponse,
  ListOperationRunsQuery,
  RunQualityChecksRequest,
  SuggestionResponse,
} from '../dto/quality.dto.js';
import type { DatasetVersionEntity } from '../entities/dataset-version.entity.js';
import { DATA_OPERATION_RUNS, QualityRepository } from './quality.repository.js';
import { RowsRepository } from '../rows/rows.repository.js';
import { operationRunResponse } from '../datasets.mapper.js';

const KIND = 'quality_checks';

/**
 * Quality checks over a version's rows (duplicates, empty fields, personal data, length
 * outliers, language mismatch, label leakage), in one streamed pass. Each run is kept as a
 * data-operation run with its verdict.
 */
@Injectable()
export class QualityService {
  constructor(
    private readonly runsRepo: QualityRepository,
    private readonly rows: RowsRepository,
    private readonly audit: AuditService,
    private readonly tracked: TrackedRecords,
    private readonly transactions: TransactionRunner,
  ) {}

  context(version: DatasetVersionEntity): QualityContext {
    return {
      columns: version.columns.map((c) => ({ name: c.name, types: c.types, mean_length: c.mean_length })),
      mapping: version.mapping,
      row_count: version.rowCount,
    };
  }

  available(version: DatasetVersionEntity): DatasetSelectableChecksResponse {
    const ctx = this.context(version);
    return {
      dataset_id: version.datasetId,
      version_id: version.id,
      checks: QUALITY_CHECKS.map((check) => {
        const applies = check.applicability(ctx);
        return {
          id: check.id,
          name: check.name,
          description: check.description,
          applicable: applies.applicable,
          reason: applies.reason,
          columns: applies.columns,
          params: check.params,
        };
      }),
    };
  }

  suggestions(version: DatasetVersionEntity): SuggestionResponse {
    return { dataset_id: version.datasetId, version_id: version.id, suggestions: suggestChecks(this.context(version)) };
  }

  /** Runs the selected checks (default: every applicable one) now, keeps the run, answers the verdict. */
  async run(
    access: WorkspaceAccess,
    version: DatasetVersionEntity,
    body: RunQualityChecksRequest,
    caller: Principal,
  ): Promise<DatasetQualityVerdictResponse> {
    const ctx = this.context(version);
    let selection: Selection[];
    try {
      selection = validateSelection(
        body.checks ?? QUALITY_CHECKS.filter((c) => c.applicability(ctx).applicable).map((c) => ({ check: c.id })),
      );
    } catch (err) {
      if (err instanceof QualityCheckSelectionError)
        throw new ValidationFailedError(err.message, [
          { field: `checks${err.field ? `.${err.field}` : ''}`, message: err.message },
        ]);
      throw err;
    }
    const started = await this.transactions.run(async () => {
      const run = await this.runsRepo.insert<DatasetQualityVerdictResponse>({
        workspaceId: access.workspaceId,
        datasetId: version.datasetId,
        versionId: version.id,
        kind: KIND,
        params: { checks: selection },
        createdBy: caller.userId,
      });
      await this.tracked.start(DATA_OPERATION_RUNS, run.id);
      return run;
    });
    const rows = this.rows;
    async function* source(): AsyncGenerator<QualityRow> {
      for await (const batch of rows.stream(version.datasetId, version.number))
        for (const r of batch) yield { row_id: r.row_id, data: r.data };
    }
    try {
      const verdict = await runQualityChecks(source(), ctx, selection);
      const result: DatasetQualityVerdictResponse = {
        run_id: started.id,
        dataset_id: version.datasetId,
        version_id: version.id,
        version_number: version.number,
        verdict: verdict.verdict,
        rows_checked: verdict.rows_checked,
        checks: verdict.checks,
        created_at: started.created_at,
      };
      await this.transactions.run(async () => {
        await this.runsRepo.saveVerdict(started.id, verdict.verdict, result);
        await this.tracked.succeed(DATA_OPERATION_RUNS, started.id);
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'quality_checks.ran',
        targetType: 'dataset',
        targetId: version.datasetId,
        details: { run_id: started.id, version_id: version.id, verdict: verdict.verdict },
      });
      return result;
    } catch (err) {
      await this.tracked.fail(DATA_OPERATION_RUNS, started.id, failureOf(err, 'quality_checks_failed'));
      throw err;
    }
  }

  /** The verdict of the newest successful run on the version. */
  async latest(version: DatasetVersionEntity): Promise<DatasetQualityVerdictResponse> {
    const row = await this.runsRepo.latestSucceeded<DatasetQualityVerdictResponse>(version.id, KIND);
    if (!row?.result)
      throw new DomainError(
        DatasetErrors.no_quality_run,
        `No quality checks have run on version ${version.number}; run them with POST quality-checks:run`,
      );
    return row.result;
  }

  latestPerVersion(datasetId: string): Promise<DatasetQualityVerdictResponse[]> {
    return this.runsRepo.latestPerVersion<DatasetQualityVerdictResponse>(datasetId, KIND);
  }

  async runs(version: DatasetVersionEntity, query: ListOperationRunsQuery): Promise<Page<DataOperationRunResponse>> {
    const [rows, total] = await this.runsRepo.page<DatasetQualityVerdictResponse>(version.id, pageWindow(query));
    return pageOf(rows, total, query, operationRunResponse);
  }

  async getRun(version: DatasetVersionEntity, runId: string): Promise<DataOperationRunResponse> {
    const row = await this.runsRepo.find<DatasetQualityVerdictResponse>(version.id, runId);
    if (!row)
      throw new DomainError(
        DatasetErrors.operation_run_not_found,
        `Version ${version.number} has no data-operation run ${runId}`,
      );
    return operationRunResponse(row);
  }
}
