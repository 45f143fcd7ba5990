import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AuditService, type AuditExpiry } from '#libs/audit/audit.service.js';
import { AppConfig } from '#libs/config/app-config.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobHandler } from '#libs/queue/job-handler.decorator.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { AUDIT_RETENTION_JOB } from './audit-log.jobs.js';
import { AuditLogRepository } from './audit-log.repository.js';

/** Events one sweep transaction deletes: bounded, so writers of the log wait at most one batch. */
const SWEEP_BATCH = 5_000;
const DAY_MS = 24 * 3600_000;

export interface AuditSweepResult {
  swept_at: Date;
  /** Events deleted, by workspace (`system` for events with none). */
  deleted: Record<string, number>;
}

/**
 * The audit log's retention sweep, hourly in a process that runs workers (as trace retention's):
 * a workspace's events older than its own retention, then every other event (the system's, and
 * those of workspaces without their own) older than AUDIT_RETENTION_DAYS. What a sweep deleted is
 * itself recorded, `audit_log.swept` in each log it touched.
 */
@Injectable()
export class AuditRetentionService implements OnApplicationBootstrap {
  private readonly logger = new Logger('AuditRetention');

  constructor(
    private readonly config: AppConfig,
    private readonly retentions: AuditLogRepository,
    private readonly audit: AuditService,
    private readonly queue: JobQueue,
    private readonly transactions: TransactionRunner,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.env.RUN_WORKERS) return;
    await this.transactions
      .run(() => this.queue.enqueueNextHour(AUDIT_RETENTION_JOB, {}))
      .catch((err: unknown) =>
        this.logger.warn(`could not schedule the audit retention sweep: ${(err as Error).message}`),
      );
  }

  @JobHandler(AUDIT_RETENTION_JOB, { maxAttempts: 3 })
  async sweepAll(): Promise<{ events_deleted: number }> {
    const result = await this.sweep();
    await this.transactions.run(() => this.queue.enqueueNextHour(AUDIT_RETENTION_JOB, {}));
    return { events_deleted: Object.values(result.deleted).reduce((n, d) => n + d, 0) };
  }

  /** Deletes every event past its retention now. */
  async sweep(now = new Date()): Promise<AuditSweepResult> {
    const deleted = new Map<string | null, number>();
    const own = await this.transactions.run(() => this.retentions.allRetentions());
    for (const { workspace_id, retention_days } of own)
      await this.deleteAll({ workspaceId: workspace_id, cutoff: cutoffOf(now, retention_days) }, deleted);
    const defaultDays = this.config.env.AUDIT_RETENTION_DAYS;
    if (defaultDays !== undefined)
      await this.deleteAll(
        { workspaceId: null, except: own.map((r) => r.workspace_id), cutoff: cutoffOf(now, defaultDays) },
        deleted,
      );
    const days = new Map(own.map((r) => [r.workspace_id, r.retention_days]));
    if (deleted.size)
      await this.transactions.run(async () => {
        for (const [workspaceId, count] of deleted) {
          const retention = (workspaceId ? days.get(workspaceId) : undefined) ?? defaultDays!;
          await this.audit.record({
            workspaceId,
            action: 'audit_log.swept',
            targetType: workspaceId ? 'workspace' : 'system',
            targetId: workspaceId,
            details: {
              retention_days: retention,
              cutoff: cutoffOf(now, retention).toISOString(),
              events_deleted: count,
            },
          });
        }
      });
    return {
      swept_at: now,
      deleted: Object.fromEntries([...deleted].map(([workspaceId, count]) => [workspaceId ?? 'system', count])),
    };
  }

  private async deleteAll(expiry: AuditExpiry, deleted: Map<string | null, number>): Promise<void> {
    for (;;) {
      const gone = await this.transactions.run(() => this.audit.deleteExpired(expiry, SWEEP_BATCH));
      for (const workspaceId of gone) deleted.set(workspaceId, (deleted.get(workspaceId) ?? 0) + 1);
      if (gone.length < SWEEP_BATCH) return;
    }
  }
}

function cutoffOf(now: Date, days: number): Date {
  return new Date(now.getTime() - days * DAY_MS);
}
