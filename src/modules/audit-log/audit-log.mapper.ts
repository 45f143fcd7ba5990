import type { AuditEventEntity } from '#libs/audit/audit-event.entity.js';
import type { AuditRetentionRow } from './audit-log.repository.js';
import type { AuditEventResponse, AuditRetentionResponse } from './dto/audit-log.dto.js';

export function toAuditEventResponse(e: AuditEventEntity): AuditEventResponse {
  return {
    id: e.id,
    workspace_id: e.workspaceId,
    action: e.action,
    actor_id: e.actorId,
    actor_email: e.actorEmail,
    target_type: e.targetType,
    target_id: e.targetId,
    details: e.details,
    request_id: e.requestId,
    created_at: e.createdAt,
  };
}

/** The columns of the CSV export, in order: the event's members, `details` as JSON text. */
export const AUDIT_CSV_COLUMNS = [
  'created_at',
  'id',
  'workspace_id',
  'action',
  'actor_id',
  'actor_email',
  'target_type',
  'target_id',
  'request_id',
  'details',
] as const;

/**
 * One CSV record of an event. A cell a spreadsheet would read as a formula (`=`, `+`, `-`, `@`, a
 * tab or carriage return first: an actor's e-mail or a record's name is caller-chosen) is quoted
 * with a leading `'`, as OWASP advises for CSV injection.
 */
export function toAuditCsvRecord(e: AuditEventEntity): string[] {
  const event = toAuditEventResponse(e);
  return AUDIT_CSV_COLUMNS.map((column) => {
    const value = event[column];
    const text =
      value === null
        ? ''
        : value instanceof Date
          ? value.toISOString()
          : column === 'details'
            ? JSON.stringify(value)
            : String(value);
    return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  });
}

export function toAuditRetentionResponse(
  workspaceId: string,
  own: AuditRetentionRow | null,
  defaultDays: number | null,
): AuditRetentionResponse {
  return {
    workspace_id: workspaceId,
    retention_days: own?.retention_days ?? null,
    default_retention_days: defaultDays,
    effective_retention_days: own?.retention_days ?? defaultDays,
    updated_by: own?.updated_by ?? null,
    updated_at: own?.updated_at ?? null,
  };
}
