import { Injectable } from '@nestjs/common';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { AuditService, type AuditFilter } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { writeCsv } from '#libs/common/csv-stream.js';
import { DomainError, ValidationFailedError } from '#libs/common/domain-error.js';
import { attachment, type FileAnswer } from '#libs/common/file-answer.js';
import { AppConfig } from '#libs/config/app-config.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { AuditLogErrors } from './audit-log.errors.js';
import {
  AUDIT_CSV_COLUMNS,
  toAuditCsvRecord,
  toAuditEventResponse,
  toAuditRetentionResponse,
} from './audit-log.mapper.js';
import { AuditLogRepository } from './audit-log.repository.js';
import type {
  AuditEventPageResponse,
  AuditExportFormat,
  AuditFilterQuery,
  AuditRetentionResponse,
  ExportAuditEventsQuery,
  ListAuditEventsQuery,
} from './dto/audit-log.dto.js';

const CONTENT_TYPES: Record<AuditExportFormat, string> = {
  jsonl: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

/**
 * The audit log as its readers see it: a workspace's events (its admins), the system's own events
 * (system admins), paged by cursor or exported whole, and how long a workspace keeps them. The
 * events themselves are written by every family through libs/audit.
 */
@Injectable()
export class AuditLogService {
  constructor(
    private readonly audit: AuditService,
    private readonly retentions: AuditLogRepository,
    private readonly config: AppConfig,
    private readonly transactions: TransactionRunner,
  ) {}

  /** A page of the log (of the workspace, or null: the system's), newest first. */
  async list(workspaceId: string | null, query: ListAuditEventsQuery): Promise<AuditEventPageResponse> {
    const filter = filterOf(workspaceId, query);
    const cursor = query.cursor ?? null;
    const events = await this.audit.page(filter, cursor, query.limit + 1);
    if (!events.length && cursor && !(await this.audit.exists(workspaceId, cursor)))
      throw new DomainError(
        AuditLogErrors.audit_cursor_invalid,
        `The cursor ${cursor} names no event of this audit log`,
      );
    const items = events.slice(0, query.limit);
    return {
      items: items.map(toAuditEventResponse),
      next_cursor: events.length > query.limit ? items[items.length - 1].id : null,
    };
  }

  /**
   * Every event the filters match, newest first, as JSON Lines or CSV, streamed a thousand at a
   * time. The export is itself recorded (`audit_log.exported`, with its filters) before it starts.
   */
  async export(
    workspaceId: string | null,
    query: ExportAuditEventsQuery,
    accept: string | undefined,
    caller: Principal,
  ): Promise<FileAnswer> {
    const filter = filterOf(workspaceId, query);
    const format: AuditExportFormat = query.format ?? (/\btext\/csv\b/.test(accept ?? '') ? 'csv' : 'jsonl');
    const { format: _, ...filters } = query;
    await this.transactions.run(() =>
      this.audit.record({
        actor: caller,
        workspaceId,
        action: 'audit_log.exported',
        targetType: workspaceId ? 'workspace' : 'system',
        targetId: workspaceId,
        details: { format, filters },
      }),
    );
    const stamp = new Date().toISOString().slice(0, 10);
    return {
      contentType: CONTENT_TYPES[format],
      headers: {
        'Content-Disposition': attachment(`audit-${workspaceId ?? 'system'}-${stamp}.${format}`),
        'Cache-Control': 'no-store',
      },
      body: (out) => (format === 'csv' ? this.writeCsv(out, filter) : this.writeJsonl(out, filter)),
    };
  }

  async retention(access: WorkspaceAccess): Promise<AuditRetentionResponse> {
    const own = await this.retentions.retention(access.workspaceId);
    return toAuditRetentionResponse(access.workspaceId, own, this.config.env.AUDIT_RETENTION_DAYS ?? null);
  }

  /** Sets (or, with null, drops) the workspace's own retention; recorded as `audit_retention.updated`. */
  async putRetention(access: WorkspaceAccess, days: number | null, caller: Principal): Promise<AuditRetentionResponse> {
    await this.transactions.run(async () => {
      const before = await this.retentions.retention(access.workspaceId);
      if (days === null) await this.retentions.removeRetention(access.workspaceId);
      else await this.retentions.putRetention(access.workspaceId, days, caller.userId);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'audit_retention.updated',
        targetType: 'workspace',
        targetId: access.workspaceId,
        details: { from: before?.retention_days ?? null, to: days },
      });
    });
    return this.retention(access);
  }

  private async writeJsonl(out: Writable, filter: AuditFilter): Promise<void> {
    for await (const batch of this.audit.stream(filter)) {
      const text = batch.map((e) => `${JSON.stringify(toAuditEventResponse(e))}\n`).join('');
      if (!out.write(text)) await once(out, 'drain');
    }
  }

  private async writeCsv(out: Writable, filter: AuditFilter): Promise<void> {
    const stream = this.audit.stream(filter);
    async function* records() {
      for await (const batch of stream) for (const event of batch) yield toAuditCsvRecord(event);
    }
    await writeCsv(out, { header: true, columns: [...AUDIT_CSV_COLUMNS] }, records());
  }
}

function filterOf(workspaceId: string | null, query: AuditFilterQuery): AuditFilter {
  const from = query.from ? new Date(query.from) : undefined;
  const to = query.to ? new Date(query.to) : undefined;
  if (from && to && from >= to)
    throw new ValidationFailedError('from must be before to', [{ field: 'from', message: 'from must be before to' }]);
  return {
    workspaceId,
    actorId: query.actor_id,
    action: query.action,
    actionPrefix: query.action_prefix,
    targetType: query.target_type,
    targetId: query.target_id,
    from,
    to,
  };
}
