import { Injectable } from '@nestjs/common';
import type { Principal } from '#libs/auth/roles.js';
import { currentApiKeyId, currentRequestId } from '#libs/common/request-context.js';
import { AuditEventEntity } from './audit-event.entity.js';
import { AuditRepository, type AuditExpiry, type AuditFilter } from './audit.repository.js';

export type { AuditExpiry, AuditFilter } from './audit.repository.js';

export interface AuditRecord {
  /** The caller; undefined for the system itself (boot, workers). */
  actor?: Pick<Principal, 'userId' | 'email'>;
  workspaceId?: string | null;
  /** dotted verb, e.g. `secret.revealed`, `member.role_changed`, `auth.login` */
  action: string;
  targetType: string;
  targetId?: string | null;
  details?: Record<string, unknown>;
}

/**
 * The shared audit trail: who did what to which record, when. Recorded inside a unit of work,
 * the entry commits (or rolls back) with the change it describes.
 */
@Injectable()
export class AuditService {
  constructor(private readonly repo: AuditRepository) {}

  /** An entry made by a request authenticated with an API key names the key in `details.api_key_id`. */
  record(entry: AuditRecord): Promise<AuditEventEntity> {
    const apiKeyId = entry.actor ? currentApiKeyId() : undefined;
    return this.repo.insert({
      workspaceId: entry.workspaceId ?? null,
      actorId: entry.actor?.userId ?? null,
      actorEmail: entry.actor?.email ?? null,
      action: entry.action,
      targetType: entry.targetType,
      targetId: entry.targetId ?? null,
      details: apiKeyId ? { ...entry.details, api_key_id: apiKeyId } : (entry.details ?? {}),
      requestId: currentRequestId() ?? null,
    });
  }

  forTarget(targetType: string, targetId: string, window: { skip: number; take: number; before?: Date }) {
    return this.repo.findByTarget(targetType, targetId, window);
  }

  /** One page of the events `filter` matches, newest first, after the event `after` (a cursor). */
  page(filter: AuditFilter, after: string | null, limit: number): Promise<AuditEventEntity[]> {
    return this.repo.page(filter, after, limit);
  }

  /** Every event `filter` matches, newest first, `batch` at a time (keyset paging: memory stays bounded). */
  async *stream(filter: AuditFilter, batch = 1000): AsyncGenerator<AuditEventEntity[]> {
    let after: string | null = null;
    for (;;) {
      const events = await this.repo.page(filter, after, batch);
      if (events.length) yield events;
      if (events.length < batch) return;
      after = events[events.length - 1].id;
    }
  }

  /** Whether the event is in the log of `workspaceId` (null: the system's). */
  exists(workspaceId: string | null, id: string): Promise<boolean> {
    return this.repo.exists(workspaceId, id);
  }

  /** Deletes up to `limit` events past their retention, answering the workspace of each (null: the system's). */
  deleteExpired(expiry: AuditExpiry, limit: number): Promise<Array<string | null>> {
    return this.repo.deleteExpired(expiry, limit);
  }
}
