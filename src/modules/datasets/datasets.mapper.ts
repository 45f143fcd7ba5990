import { strongEtag } from '#libs/common/etag.js';
import type { AuditEventEntity } from '#libs/audit/audit-event.entity.js';
import type {
  AuditEntryResponse,
  DatasetResponse,
  DatasetVersionResponse,
  SnapshotResponse,
} from './dto/dataset.dto.js';
import type { DatasetFields, VersionFields } from './datasets.repository.js';
import type { DataOperationRunResponse, DatasetQualityVerdictResponse } from './dto/quality.dto.js';
import type { OperationRunRow } from './quality/quality.repository.js';
import type { PartitionResponse } from './dto/dimensions.dto.js';
import type { PartitionRow } from './dimensions/partitions.repository.js';
import { defineStateVocabulary } from '#libs/queue/tracked-job.js';

/** The documented states of a data-operation run: it runs in the request, so it is never seen queued or cancelled. */
export const OPERATION_RUN_STATES = defineStateVocabulary(['running', 'succeeded', 'failed'], {
  queued: 'running',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'failed',
});

export const DOWNLOAD_FORMATS = ['csv', 'jsonl', 'parquet'] as const;
export type DownloadFormat = (typeof DOWNLOAD_FORMATS)[number];

export function toVersionResponse(v: VersionFields): DatasetVersionResponse {
  return {
    id: v.id,
    dataset_id: v.datasetId,
    workspace_id: v.workspaceId,
    number: v.number,
    state: v.state,
    message: v.message,
    source: v.source,
    parent_version_id: v.parentVersionId,
    row_count: v.rowCount,
    columns: v.columns.map((c) => c.name),
    mapping: v.mapping,
    content_sha256: v.contentSha256,
    ...(v.upload ? { upload: v.upload } : {}),
    ...(v.changes ? { changes: v.changes } : {}),
    created_by: v.createdBy,
    created_at: v.createdAt,
    promoted_at: v.promotedAt,
    retired_at: v.retiredAt,
  };
}

export function toDatasetResponse(
  d: DatasetFields,
  latest: VersionFields | null,
  counts: { count: number; staged: number },
): DatasetResponse {
  return {
    id: d.id,
    workspace_id: d.workspaceId,
    name: d.name,
    description: d.description,
    kind: d.kind,
    tags: d.tags,
    current_version_id: d.currentVersionId,
    latest_version: latest ? toVersionResponse(latest) : null,
    version_count: counts.count,
    staged_edits: counts.staged,
    created_by: d.createdBy,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
    version: d.version,
  };
}

export function toSnapshotResponse(v: VersionFields): SnapshotResponse {
  return {
    version_id: v.id,
    version_number: v.number,
    state: v.state,
    row_count: v.rowCount,
    content_sha256: v.contentSha256,
    formats: [...DOWNLOAD_FORMATS],
    created_at: v.createdAt,
  };
}

export function toAuditEntry(e: AuditEventEntity): AuditEntryResponse {
  return {
    id: e.id,
    action: e.action,
    actor_id: e.actorId,
    actor_email: e.actorEmail,
    details: e.details,
    request_id: e.requestId,
    created_at: e.createdAt,
  };
}

/** A stored row as clients see it: its id under `_row_id`, then its columns. */
export function rowObject(rowId: string, data: Record<string, unknown>): Record<string, unknown> {
  return { _row_id: rowId, ...data };
}

export function operationRunResponse(r: OperationRunRow<DatasetQualityVerdictResponse>): DataOperationRunResponse {
  return {
    id: r.id,
    dataset_id: r.dataset_id,
    version_id: r.version_id,
    kind: r.kind,
    state: OPERATION_RUN_STATES.show(r.state),
    params: r.params,
    verdict: r.verdict,
    result: r.result,
    error: r.failure?.message ?? null,
    created_by: r.created_by,
    created_at: r.created_at,
    finished_at: r.finished_at,
  };
}

/** A saved partition with the number of rows it selects in its version. */
export function toPartitionResponse(row: PartitionRow, rowCount: number): PartitionResponse {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    version_id: row.version_id,
    name: row.name,
    description: row.description,
    level: row.level,
    dimension_values: row.dimension_values,
    filter: row.filter,
    row_count: rowCount,
    created_by: row.created_by,
    created_at: row.created_at,
  };
}

/** The record's ETag (If-Match on writes; the ETag header on reads and writes). */
export function datasetEtag(dataset: Pick<DatasetResponse, 'id' | 'version'>): string {
  return strongEtag('dataset', dataset.id, dataset.version);
}
