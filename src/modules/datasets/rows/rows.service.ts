import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, ValidationFailedError } from '#libs/common/domain-error.js';
import { timeOrderedUuid } from '#libs/common/time-ordered-uuid.js';
import { isUuid } from '#libs/common/uuid.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { DatasetErrors } from '../datasets.errors.js';
import { rowObject, toVersionResponse } from '../datasets.mapper.js';
import { DatasetsRepository } from '../datasets.repository.js';
import { DatasetsService } from '../datasets.service.js';
import type {
  CommitRowsRequest,
  DeleteRowsRequest,
  InsertRowsRequest,
  RowOperationResponse,
  StagedEditResponse,
  UpdateRowsRequest,
} from '../dto/rows.dto.js';
import type { DatasetEntity } from '../entities/dataset.entity.js';
import { RowsRepository, type StagedEdit } from './rows.repository.js';
import { MAX_ROWS_PER_EDIT, normalizeRow, RowRuleError } from './rows.rules.js';
import { VersionsService } from '../versions/versions.service.js';

/** Audit entries list at most this many row ids; the count is always exact. */
const AUDIT_ROW_IDS = 100;

/**
 * Row edits are staged per dataset against its newest version, then committed as one new
 * immutable version. A row staged by one user cannot be staged by another until it is
 * committed or discarded (409 row_edit_conflict): edits are never merged silently.
 */
@Injectable()
export class RowsService {
  constructor(
    private readonly datasets: DatasetsRepository,
    private readonly datasetsService: DatasetsService,
    private readonly versions: VersionsService,
    private readonly rows: RowsRepository,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  async insert(
    access: WorkspaceAccess,
    datasetId: string,
    body: InsertRowsRequest,
    caller: Principal,
  ): Promise<Array<Record<string, unknown>>> {
    const normalized = body.rows.map((row, i) => this.normalize(row, `rows[${i}]`));
    const ids = normalized.map((r) => r.rowId ?? timeOrderedUuid());
    const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (repeated.length)
      throw new DomainError(DatasetErrors.invalid_row, `_row_id ${repeated[0]} appears twice in the request`, {
        row_ids: [...new Set(repeated)],
      });
    return this.transactions.run(async () => {
      const dataset = await this.datasetsService.requireLocked(access, datasetId);
      const existing = await this.rows.existing(datasetId, dataset.latestVersion, ids);
      if (existing.size)
        throw new DomainError(
          DatasetErrors.row_exists,
          `The dataset already has row ${[...existing][0]}; update it instead`,
          { row_ids: [...existing] },
        );
      const staged = await this.rows.stagedFor(datasetId, ids);
      this.assertNoConflict(staged, caller);
      if (staged.size)
        throw new DomainError(
          DatasetErrors.row_exists,
          `Row ${[...staged.keys()][0]} is already staged; update it instead`,
          { row_ids: [...staged.keys()] },
        );
      await this.rows.stageMany(
        datasetId,
        normalized.map((r, i) => this.edit(ids[i], 'insert', r.data, dataset, caller)),
      );
      await this.recordStaged(access, datasetId, 'insert', ids, caller);
      return normalized.map((r, i) => rowObject(ids[i], r.data));
    });
  }

  async update(
    access: WorkspaceAccess,
    datasetId: string,
    body: UpdateRowsRequest,
    caller: Principal,
  ): Promise<Record<string, Record<string, unknown>>> {
    const entries = Object.entries(body.rows);
    if (!entries.length || entries.length > MAX_ROWS_PER_EDIT) {
      throw new ValidationFailedError(`rows must name 1 to ${MAX_ROWS_PER_EDIT} rows`, [
        { field: 'rows', message: `between 1 and ${MAX_ROWS_PER_EDIT} row ids` },
      ]);
    }
    for (const [id, patch] of entries) {
      if (!isUuid(id))
        throw new ValidationFailedError(`rows: "${String(id).slice(0, 60)}" is not a row id (UUID)`, [
          { field: `rows.${String(id).slice(0, 60)}`, message: 'must be a UUID' },
        ]);
      if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
        throw new ValidationFailedError(`rows.${id} must be an object of column values`, [
          { field: `rows.${id}`, message: 'must be an object' },
        ]);
      }
    }
    const ids = entries.map(([id]) => id.toLowerCase());
    return this.transactions.run(async () => {
      const dataset = await this.datasetsService.requireLocked(access, datasetId);
      const staged = await this.rows.stagedFor(datasetId, ids);
      this.assertNoConflict(staged, caller);
      const stored = await this.rows.byIds(datasetId, dataset.latestVersion, ids);
      const deleted = ids.filter((id) => staged.get(id)?.op === 'delete');
      if (deleted.length)
        throw new DomainError(DatasetErrors.row_not_found, `Row ${deleted[0]} is staged for deletion`, {
          row_ids: deleted,
        });
      const missing = ids.filter((id) => !stored.has(id) && !staged.has(id));
      if (missing.length)
        throw new DomainError(DatasetErrors.row_not_found, `The dataset has no row ${missing[0]}`, {
          row_ids: missing,
        });
      const result: Record<string, Record<string, unknown>> = {};
      const edits = entries.map(([, patch], i) => {
        const id = ids[i];
        const base = staged.get(id)?.data ?? stored.get(id)!.data;
        const { data } = this.normalize(body.mode === 'replace' ? patch : { ...base, ...patch }, `rows.${id}`);
        result[id] = rowObject(id, data);
        return this.edit(id, staged.get(id)?.op === 'insert' ? 'insert' : 'update', data, dataset, caller);
      });
      await this.rows.stageMany(datasetId, edits);
      await this.recordStaged(access, datasetId, 'update', ids, caller);
      return result;
    });
  }

  async delete(
    access: WorkspaceAccess,
    datasetId: string,
    body: DeleteRowsRequest,
    caller: Principal,
  ): Promise<string[]> {
    const ids = [...new Set(body.row_ids.map((id) => id.toLowerCase()))];
    return this.transactions.run(async () => {
      const dataset = await this.datasetsService.requireLocked(access, datasetId);
      const staged = await this.rows.stagedFor(datasetId, ids);
      this.assertNoConflict(staged, caller);
      const stored = await this.rows.existing(datasetId, dataset.latestVersion, ids);
      const missing = ids.filter((id) => !stored.has(id) && !staged.has(id));
      if (missing.length)
        throw new DomainError(DatasetErrors.row_not_found, `The dataset has no row ${missing[0]}`, {
          row_ids: missing,
        });
      // Deleting a row that was only staged for insertion simply drops that insertion.
      const stagedInserts = ids.filter((id) => staged.get(id)?.op === 'insert');
      await this.rows.unstage(datasetId, stagedInserts);
      await this.rows.stageMany(
        datasetId,
        ids.filter((id) => stored.has(id)).map((id) => this.edit(id, 'delete', null, dataset, caller)),
      );
      await this.recordStaged(access, datasetId, 'delete', ids, caller);
      return ids;
    });
  }

  async staged(access: WorkspaceAccess, datasetId: string): Promise<StagedEditResponse[]> {
    await this.datasetsService.require(access, datasetId);
    return (await this.rows.staged(datasetId)).map((e) => ({
      row_id: e.row_id,
      op: e.op,
      row: e.data ? rowObject(e.row_id, e.data) : null,
      base_version: e.base_version,
      staged_by: e.staged_by,
      staged_by_email: e.staged_by_email,
      staged_at: e.staged_at,
    }));
  }

  async discard(access: WorkspaceAccess, datasetId: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      await this.datasetsService.requireLocked(access, datasetId);
      const discarded = await this.rows.discardStaged(datasetId);
      if (discarded)
        await this.audit.record({
          actor: caller,
          workspaceId: access.workspaceId,
          action: 'rows.discarded',
          targetType: 'dataset',
          targetId: datasetId,
          details: { edits: discarded },
        });
    });
  }

  /** Turns every staged edit into a new version, in one transaction. */
  async commit(
    access: WorkspaceAccess,
    datasetId: string,
    body: CommitRowsRequest,
    caller: Principal,
  ): Promise<RowOperationResponse> {
    const result = await this.transactions.run(async () => {
      const dataset = await this.datasetsService.requireLocked(access, datasetId);
      const staged = await this.rows.staged(datasetId);
      if (!staged.length)
        throw new DomainError(
          DatasetErrors.nothing_to_commit,
          'No row edits are staged; stage some with rows/insert, rows/update or rows/delete',
        );
      const stale = await this.rows.staleStaged(datasetId, dataset.latestVersion);
      if (stale.length) {
        throw new DomainError(
          DatasetErrors.stale_edits,
          `${stale.length} staged edits name rows that version ${dataset.latestVersion} no longer has; discard them (DELETE rows/staged) and stage again`,
          { row_ids: stale.slice(0, 1000) },
        );
      }
      const head = await this.datasets.findVersionByNumber(dataset.workspaceId, datasetId, dataset.latestVersion);
      const next = dataset.latestVersion + 1;
      const changes = await this.rows.applyStaged(datasetId, next, dataset.nextOrdinal);
      const columnOrder = [...(head?.columns.map((c) => c.name) ?? [])];
      for (const edit of staged)
        for (const key of Object.keys(edit.data ?? {})) if (!columnOrder.includes(key)) columnOrder.push(key);
      const version = await this.datasetsService.createVersion(
        dataset,
        next,
        columnOrder,
        { source: 'commit', message: body.message ?? '', changes },
        caller.userId,
      );
      await this.datasets.setCounters(datasetId, {
        latestVersion: next,
        nextOrdinal: dataset.nextOrdinal + changes.inserted,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'rows.committed',
        targetType: 'dataset',
        targetId: datasetId,
        details: { version_id: version.id, number: next, message: body.message ?? '', ...changes },
      });
      return { version, changes };
    });
    const version = body.promote
      ? await this.versions.promote(access, datasetId, result.version.id, caller)
      : toVersionResponse(result.version);
    return { dataset_id: datasetId, version, ...result.changes, row_count: version.row_count };
  }

  /**
   * Rows another family routes into a test-case dataset (online evaluation's failing traces),
   * staged as inserts for a member to commit, inside the caller's unit of work. Idempotent: a row
   * id the dataset shows or has staged already is left as it is. Answers how many were staged;
   * none when the dataset is gone or holds traces.
   */
  async stageRouted(
    workspaceId: string,
    datasetId: string,
    rows: Array<{ rowId: string; data: Record<string, unknown> }>,
    stagedBy: { userId: string; email: string },
  ): Promise<number> {
    const dataset = await this.datasetsService.findLocked(workspaceId, datasetId);
    if (!dataset || dataset.kind !== 'rows' || !rows.length) return 0;
    const ids = rows.map((r) => r.rowId);
    const existing = await this.rows.existing(datasetId, dataset.latestVersion, ids);
    const staged = await this.rows.stagedFor(datasetId, ids);
    const fresh = rows.filter((r) => !existing.has(r.rowId) && !staged.has(r.rowId));
    if (!fresh.length) return 0;
    await this.rows.stageMany(
      datasetId,
      fresh.map((r) => this.edit(r.rowId, 'insert', this.normalize(r.data, r.rowId).data, dataset, stagedBy)),
    );
    return fresh.length;
  }

  private normalize(row: Record<string, unknown>, where: string) {
    try {
      return normalizeRow(row, where);
    } catch (err) {
      if (err instanceof RowRuleError)
        throw new DomainError(DatasetErrors.invalid_row, `${err.where}: ${err.reason}`, {
          where: err.where,
          reason: err.reason,
        });
      throw err;
    }
  }

  private edit(
    rowId: string,
    op: StagedEdit['op'],
    data: Record<string, unknown> | null,
    dataset: DatasetEntity,
    caller: Pick<Principal, 'userId' | 'email'>,
  ) {
    return {
      row_id: rowId,
      op,
      data,
      base_version: dataset.latestVersion,
      staged_by: caller.userId,
      staged_by_email: caller.email,
    };
  }

  private assertNoConflict(staged: Map<string, StagedEdit>, caller: Principal): void {
    const others = [...staged.values()].filter((e) => e.staged_by !== caller.userId);
    if (!others.length) return;
    const first = others[0];
    throw new DomainError(
      DatasetErrors.row_edit_conflict,
      `Row ${first.row_id} has a staged ${first.op} by ${first.staged_by_email ?? 'another user'} since ${new Date(first.staged_at).toISOString()}; commit or discard it first`,
      {
        conflicts: others.map((e) => ({
          row_id: e.row_id,
          op: e.op,
          staged_by: e.staged_by,
          staged_by_email: e.staged_by_email,
          staged_at: e.staged_at,
        })),
      },
    );
  }

  private recordStaged(access: WorkspaceAccess, datasetId: string, op: string, ids: string[], caller: Principal) {
    return this.audit.record({
      actor: caller,
      workspaceId: access.workspaceId,
      action: 'rows.staged',
      targetType: 'dataset',
      targetId: datasetId,
      details: { op, count: ids.length, row_ids: ids.slice(0, AUDIT_ROW_IDS) },
    });
  }
}
