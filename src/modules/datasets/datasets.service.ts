import { AccessRepository } from '#libs/auth/access.repository.js';
import { Injectable } from '@nestjs/common';
import { unlink } from 'node:fs/promises';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { type Page, pageOf, pageWindow, parseSort } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { isUniqueViolation } from '#libs/database/database-errors.js';
import { AppConfig } from '#libs/config/app-config.js';
import { DatasetErrors } from './datasets.errors.js';
import { datasetEtag, toAuditEntry, toDatasetResponse, toSnapshotResponse } from './datasets.mapper.js';
import { DatasetsRepository } from './datasets.repository.js';
import type {
  AuditEntryResponse,
  AuditQuery,
  DatasetResponse,
  ListDatasetsQuery,
  SchemaResponse,
  SnapshotResponse,
  UpdateDatasetRequest,
  UploadDatasetRequest,
} from './dto/dataset.dto.js';
import type { ColumnStats, DatasetVersionEntity } from './entities/dataset-version.entity.js';
import type { DatasetEntity, DatasetKind } from './entities/dataset.entity.js';
import { DatasetIndexMaintenance } from './index-maintenance.job.js';
import { formatFromFilename, IngestError, type UploadFormat } from './ingest/row-sources.js';
import { TooManyRowsError, type UploadSummary } from './ingest/upload-encoding.js';
import { encodedUpload } from './ingest/upload-thread.js';
import { RowsRepository } from './rows/rows.repository.js';
import { RowRuleError } from './rows/rows.rules.js';

export interface UploadedFile {
  path: string;
  originalname: string;
  size: number;
}

/** Datasets: upload, list, read, edit, delete; their schema, snapshots and audit trail. */
@Injectable()
export class DatasetsService {
  constructor(
    private readonly datasets: DatasetsRepository,
    private readonly rows: RowsRepository,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
    private readonly config: AppConfig,
    private readonly indexMaintenance: DatasetIndexMaintenance,
    private readonly access: AccessRepository,
  ) {}

  async list(query: ListDatasetsQuery, caller: Principal): Promise<Page<DatasetResponse>> {
    const sort = parseSort(
      query.sort,
      { name: 'name', created_at: 'created_at', updated_at: 'updated_at' },
      '-created_at',
    );
    // Without workspace_id: every workspace the caller belongs to (an API key: its own).
    const workspaceId = query.workspace_id ?? caller.apiKey?.workspaceId;
    const workspaceIds =
      workspaceId || caller.systemRole === 'admin' ? undefined : await this.access.workspaceIdsOf(caller.userId);
    const [rows, total] = await this.datasets.list(
      { workspaceId, workspaceIds, q: query.q, kind: query.kind, tag: query.tag },
      sort,
      pageWindow(query),
    );
    const responses = await this.responses(rows);
    return pageOf(responses, total, query, (r) => r);
  }

  async get(access: WorkspaceAccess, id: string): Promise<DatasetResponse> {
    const view = await this.datasets.findView(access.workspaceId, id);
    if (!view) throw new NotFoundError('dataset', id);
    return toDatasetResponse(view.dataset, view.latest, view.counts);
  }

  /**
   * Streams the file into a new dataset (or a new version of `dataset_id`) in one transaction:
   * a malformed file, a broken row rule or too many rows rolls everything back.
   */
  async upload(
    access: WorkspaceAccess,
    body: UploadDatasetRequest,
    file: UploadedFile | undefined,
    caller: Principal,
  ): Promise<DatasetResponse> {
    if (!file) throw new DomainError(DatasetErrors.file_required, 'Send the file as the multipart part named `file`');
    try {
      const format = body.format ?? formatFromFilename(file.originalname);
      if (!format) {
        throw new DomainError(
          DatasetErrors.unsupported_format,
          `Cannot tell the format of "${file.originalname}"; send format=csv, json, jsonl or parquet`,
        );
      }
      const datasetId = await this.transactions.run(async () => {
        const dataset = body.dataset_id
          ? await this.requireLocked(access, body.dataset_id)
          : await this.create(access, body, file.originalname, caller);
        const number = dataset.latestVersion + 1;
        const {
          rowCount: count,
          nextOrdinal: ordinal,
          columnOrder,
          sha256,
          gathered,
        } = await this.writeUploadedRows(dataset, number, file, format, body.delimiter);
        const version = await this.createVersion(
          dataset,
          number,
          columnOrder,
          {
            source: 'upload',
            message: body.message ?? '',
            upload: { filename: file.originalname, format, bytes: file.size },
          },
          caller.userId,
          { gathered, content: { rowCount: count, sha256 } },
        );
        await this.datasets.setCounters(dataset.id, { latestVersion: number, nextOrdinal: ordinal });
        await this.indexMaintenance.afterBulkWrite(access.workspaceId, dataset.id, count);
        await this.audit.record({
          actor: caller,
          workspaceId: access.workspaceId,
          action: 'version.created',
          targetType: 'dataset',
          targetId: dataset.id,
          details: {
            version_id: version.id,
            number,
            source: 'upload',
            rows: count,
            format,
            filename: file.originalname,
            bytes: file.size,
          },
        });
        return dataset.id;
      });
      return this.get(access, datasetId);
    } catch (err) {
      if (err instanceof TooManyRowsError) throw new DomainError(DatasetErrors.too_many_rows, err.message);
      if (err instanceof IngestError || err instanceof RowRuleError) {
        throw new DomainError(DatasetErrors.malformed_file, `${err.where}: ${err.reason}`, {
          where: err.where,
          reason: err.reason,
        });
      }
      throw err;
    } finally {
      await unlink(file.path).catch(() => undefined);
    }
  }

  /**
   * Writes the file's rows as version `number` of the dataset: read, checked, measured, hashed and
   * encoded for COPY as the rows stream (on a worker thread for a large file, overlapping the
   * COPY), so nothing reads them back; the columns' distinct counts the stream could not keep are
   * counted in the database after.
   */
  private async writeUploadedRows(
    dataset: DatasetEntity,
    number: number,
    file: UploadedFile,
    format: UploadFormat,
    delimiter: string | undefined,
  ): Promise<UploadSummary & { gathered: UploadSummary['columns'] }> {
    const encoding = encodedUpload(
      {
        path: file.path,
        format,
        delimiter,
        maxRows: this.config.env.UPLOAD_MAX_ROWS,
        datasetId: dataset.id,
        version: number,
        firstOrdinal: dataset.nextOrdinal,
        ...this.rows.copyChunking,
      },
      file.size,
      this.config.env.UPLOAD_THREAD_MIN_BYTES,
    );
    let summary: UploadSummary | undefined;
    async function* chunks() {
      summary = yield* encoding;
    }
    if (dataset.latestVersion > 0) await this.rows.closeAll(dataset.id, number);
    await this.rows.appendEncoded(chunks()).catch((err: unknown) => {
      if (isUniqueViolation(err)) {
        throw new DomainError(DatasetErrors.invalid_row, 'Two rows carry the same _row_id', {
          where: 'the file',
          reason: 'a _row_id appears twice',
        });
      }
      throw err;
    });
    const written = summary!;
    if (written.rowCount === 0) throw new DomainError(DatasetErrors.empty_dataset, 'The file holds no rows');
    const { uncounted } = written;
    const recounted = uncounted.length ? await this.rows.distinctCounts(dataset.id, number, uncounted) : {};
    const gathered = written.columns.map((column) =>
      uncounted.includes(column.name) ? { ...column, distinct_count: recounted[column.name] ?? 0 } : column,
    );
    return { ...written, gathered };
  }

  async update(
    access: WorkspaceAccess,
    id: string,
    body: UpdateDatasetRequest,
    ifMatch: IfMatchPrecondition,
    caller: Principal,
  ): Promise<DatasetResponse> {
    await this.transactions.run(async () => {
      const dataset = await this.requireLocked(access, id);
      ifMatch.check(datasetEtag(dataset));
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      if (body.name !== undefined && body.name !== dataset.name) {
        if (await this.datasets.nameTaken(access.workspaceId, body.name, id)) throw this.nameTaken(body.name);
        changes.name = { from: dataset.name, to: body.name };
        dataset.name = body.name;
      }
      if (body.description !== undefined && body.description !== dataset.description) {
        changes.description = { from: dataset.description, to: body.description };
        dataset.description = body.description;
      }
      if (body.tags !== undefined) {
        const tags = [...new Set(body.tags)];
        if (tags.join('\n') !== dataset.tags.join('\n')) {
          changes.tags = { from: dataset.tags, to: tags };
          dataset.tags = tags;
        }
      }
      if (!Object.keys(changes).length) return;
      dataset.updatedBy = caller.userId;
      await this.datasets.save(dataset);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'dataset.updated',
        targetType: 'dataset',
        targetId: id,
        details: changes,
      });
    });
    return this.get(access, id);
  }

  /** Deletes the dataset with its versions, rows, dimensions and partitions. */
  async delete(access: WorkspaceAccess, id: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      const dataset = await this.requireLocked(access, id);
      await this.datasets.delete(id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'dataset.deleted',
        targetType: 'dataset',
        targetId: id,
        details: { name: dataset.name, versions: dataset.latestVersion },
      });
    });
  }

  async auditTrail(access: WorkspaceAccess, id: string, query: AuditQuery): Promise<AuditEntryResponse[]> {
    await this.require(access, id);
    const [entries] = await this.audit.forTarget('dataset', id, {
      skip: 0,
      take: query.limit,
      before: query.before ? new Date(query.before) : undefined,
    });
    return entries.map(toAuditEntry);
  }

  async schema(access: WorkspaceAccess, id: string, versionId: string | undefined): Promise<SchemaResponse> {
    const dataset = await this.require(access, id);
    const version = await this.resolveVersion(dataset, versionId);
    return {
      dataset_id: id,
      version_id: version.id,
      version_number: version.number,
      row_count: version.rowCount,
      columns: version.columns,
      mapping: version.mapping,
    };
  }

  async snapshots(access: WorkspaceAccess, id: string): Promise<SnapshotResponse[]> {
    await this.require(access, id);
    return (await this.datasets.allVersions(id)).map(toSnapshotResponse);
  }

  /** The version named, else the current one, else the newest; 404 when the dataset has none. */
  async resolveVersion(dataset: DatasetEntity, versionId: string | undefined): Promise<DatasetVersionEntity> {
    const version = versionId
      ? await this.datasets.findVersion(dataset.workspaceId, dataset.id, versionId)
      : dataset.currentVersionId
        ? await this.datasets.findVersion(dataset.workspaceId, dataset.id, dataset.currentVersionId)
        : await this.datasets.findVersionByNumber(dataset.workspaceId, dataset.id, dataset.latestVersion);
    if (!version)
      throw new DomainError(
        DatasetErrors.version_not_found,
        versionId ? `Dataset ${dataset.id} has no version ${versionId}` : `Dataset ${dataset.id} has no version yet`,
      );
    return version;
  }

  /**
   * Records a version whose rows are already written: the content hash and the column statistics
   * come from the rows themselves, unless an upload gathered them while it streamed; columns keep
   * `columnOrder` (the file's order, or the parent's). A number a trace landing has reserved
   * (its rows are being written) is refused to anyone but that landing (`reserved`). The mapping
   * carries over from the parent; `mapping` is the one a version gets when none carries over.
   */
  async createVersion(
    dataset: DatasetEntity,
    number: number,
    columnOrder: string[],
    fields: Pick<DatasetVersionEntity, 'source' | 'message'> &
      Partial<Pick<DatasetVersionEntity, 'upload' | 'changes'>>,
    createdBy: string | null,
    {
      gathered,
      content,
      reserved = false,
      mapping: fallback,
    }: {
      gathered?: ColumnStats[];
      content?: { rowCount: number; sha256: string };
      reserved?: boolean;
      mapping?: DatasetVersionEntity['mapping'];
    } = {},
  ): Promise<DatasetVersionEntity> {
    if (!reserved && (await this.datasets.writingVersion(dataset.id)) === number) {
      throw new DomainError(
        DatasetErrors.dataset_busy,
        `A trace landing is writing version ${number} of dataset ${dataset.id}; make the new version once it is done`,
      );
    }
    const { rowCount, sha256 } = content ?? (await this.rows.contentHash(dataset.id, number));
    const stats = {
      rowCount,
      sha256,
      columns: gathered ?? (await this.rows.versionStats(dataset.id, number, columnOrder, rowCount)),
    };
    const parent =
      number > 1 ? await this.datasets.findVersionByNumber(dataset.workspaceId, dataset.id, number - 1) : null;
    const columns = new Set(stats.columns.map((c) => c.name));
    // The mapping carries over while its columns still exist.
    const carried = Object.fromEntries(
      Object.entries(parent?.mapping ?? {})
        .map(([field, value]) => [field, Array.isArray(value) ? value.filter((c) => columns.has(c)) : value])
        .filter(([, value]) => (Array.isArray(value) ? value.length > 0 : columns.has(value as string))),
    );
    const mapping = Object.keys(carried).length || !fallback ? carried : { ...fallback };
    return this.datasets.insertVersion({
      datasetId: dataset.id,
      workspaceId: dataset.workspaceId,
      number,
      state: 'candidate',
      parentVersionId: parent?.id ?? null,
      rowCount: stats.rowCount,
      columns: stats.columns,
      contentSha256: stats.sha256,
      mapping,
      createdBy,
      upload: fields.upload ?? null,
      changes: fields.changes ?? null,
      source: fields.source,
      message: fields.message,
    });
  }

  /** Recomputes a version's row count, content hash and column statistics from its rows (a live trace head, once sealed). */
  async restat(version: DatasetVersionEntity): Promise<DatasetVersionEntity> {
    const { rowCount, sha256 } = await this.rows.contentHash(version.datasetId, version.number);
    version.rowCount = rowCount;
    version.contentSha256 = sha256;
    version.columns = await this.rows.versionStats(
      version.datasetId,
      version.number,
      version.columns.map((c) => c.name),
      rowCount,
    );
    return this.datasets.saveVersion(version);
  }

  /** The dataset, in the caller's workspace (the guard resolved it from the path). */
  async require(access: WorkspaceAccess, id: string): Promise<DatasetEntity> {
    const dataset = await this.datasets.find(access.workspaceId, id);
    if (!dataset) throw new NotFoundError('dataset', id);
    return dataset;
  }

  async requireLocked(access: WorkspaceAccess, id: string): Promise<DatasetEntity> {
    const dataset = await this.findLocked(access.workspaceId, id);
    if (!dataset) throw new NotFoundError('dataset', id);
    return dataset;
  }

  /** Of `ids`, those that are not datasets of the workspace (for families that link datasets: projects). */
  missing(workspaceId: string, ids: string[]): Promise<string[]> {
    return this.datasets.missing(workspaceId, ids);
  }

  /** The kind of the workspace's dataset of this name (compared case-insensitively), or null when the name is free. */
  kindByName(workspaceId: string, name: string): Promise<DatasetKind | null> {
    return this.datasets.kindByName(workspaceId, name);
  }

  /** The id and kind of the workspace's dataset of this name (compared case-insensitively), or null when the name is free. */
  findByName(workspaceId: string, name: string): Promise<{ id: string; kind: DatasetKind } | null> {
    return this.datasets.findByName(workspaceId, name);
  }

  /** The datasets of this kind in these workspaces (every workspace when null), by workspace then id. */
  ofKind(
    kind: DatasetKind,
    workspaceIds: string[] | null,
  ): Promise<Array<{ workspace_id: string; dataset_id: string }>> {
    return this.datasets.ofKind(kind, workspaceIds);
  }

  /**
   * The workspace's dataset with its row locked for the caller's unit of work (which it joins),
   * or null: for families that write beside a dataset (traces) and answer with errors of their own.
   */
  async findLocked(workspaceId: string, id: string): Promise<DatasetEntity | null> {
    return this.datasets.findForUpdate(workspaceId, id);
  }

  async responses(datasets: DatasetEntity[]): Promise<DatasetResponse[]> {
    const ids = datasets.map((d) => d.id);
    const [summaries, latest] = await Promise.all([
      this.datasets.versionSummaries(ids),
      this.datasets.latestVersions(ids),
    ]);
    const latestById = new Map(latest.map((v) => [v.datasetId, v]));
    return datasets.map((d) =>
      toDatasetResponse(d, latestById.get(d.id) ?? null, summaries.get(d.id) ?? { count: 0, staged: 0 }),
    );
  }

  private async create(
    access: WorkspaceAccess,
    body: UploadDatasetRequest,
    filename: string,
    caller: Principal,
  ): Promise<DatasetEntity> {
    const name = (body.name ?? filename.replace(/\.[^.]*$/, '')).trim().slice(0, 200) || 'dataset';
    if (await this.datasets.nameTaken(access.workspaceId, name, undefined)) throw this.nameTaken(name);
    const dataset = await this.datasets
      .insert({
        workspaceId: access.workspaceId,
        name,
        description: body.description ?? '',
        kind: 'rows',
        tags: [...new Set(body.tags ?? [])],
        createdBy: caller.userId,
      })
      .catch((err: unknown) => {
        throw isUniqueViolation(err) ? this.nameTaken(name) : err;
      });
    await this.audit.record({
      actor: caller,
      workspaceId: access.workspaceId,
      action: 'dataset.created',
      targetType: 'dataset',
      targetId: dataset.id,
      details: { name },
    });
    return dataset;
  }

  private nameTaken(name: string): DomainError {
    return new DomainError(DatasetErrors.dataset_name_taken, `The workspace already has a dataset named "${name}"`);
  }
}
