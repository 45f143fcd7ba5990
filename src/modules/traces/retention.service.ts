import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { rm } from 'node:fs/promises';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobHandler } from '#libs/queue/job-handler.decorator.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { AppConfig } from '#libs/config/app-config.js';
import { DatasetWritesService } from '../datasets/dataset-writes.service.js';
import type {
  DatasetTraceRetentionResponse,
  TraceRetentionResponse,
  TraceRetentionSweepResponse,
} from './dto/retention.dto.js';
import { TRACE_RETENTION_JOB } from './traces.jobs.js';
import { RetentionRepository } from './retention.repository.js';
import { TraceDatasets } from './trace-datasets.service.js';

/** Spans one sweep transaction deletes: bounded, so writers to the dataset wait at most one batch. */
const SWEEP_BATCH = 10_000;
const HOUR_MS = 3600_000;
/** The key of a span's data that retention ages it by: when it started. */
const SPAN_START = 'start_time';

/** A trace dataset and the retention that applies to it (its own, else its workspace's). */
interface RetainedDataset {
  workspace_id: string;
  dataset_id: string;
  retention_days: number;
}

/**
 * Trace retention: a workspace's default and per-dataset overrides, and the sweep (hourly, in a
 * process that runs workers, and on demand) that deletes spans that started before the cutoff
 * from every version of the dataset (their row counts and statistics follow) with the scores of
 * traces that started before it, uploads received before it (rows and files) and the payloads
 * landings kept, each recorded in the audit trail.
 */
@Injectable()
export class TraceRetentionService implements OnApplicationBootstrap {
  private readonly logger = new Logger('TraceRetention');

  constructor(
    private readonly config: AppConfig,
    private readonly retention: RetentionRepository,
    private readonly traceDatasets: TraceDatasets,
    private readonly datasetWrites: DatasetWritesService,
    private readonly audit: AuditService,
    private readonly queue: JobQueue,
    private readonly transactions: TransactionRunner,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.env.RUN_WORKERS) return;
    await this.transactions
      .run(() => this.queue.enqueueNextHour(TRACE_RETENTION_JOB, {}))
      .catch((err: unknown) => this.logger.warn(`could not schedule the retention sweep: ${(err as Error).message}`));
  }

  async getWorkspace(access: WorkspaceAccess): Promise<TraceRetentionResponse> {
    const rows = await this.retention.listForWorkspace(access.workspaceId);
    return {
      workspace_id: access.workspaceId,
      retention_days: rows.find((r) => r.dataset_id === null)?.retention_days ?? null,
      datasets: rows
        .filter((r) => r.dataset_id !== null)
        .map((r) => ({ dataset_id: r.dataset_id!, retention_days: r.retention_days })),
    };
  }

  async putWorkspace(access: WorkspaceAccess, days: number | null, caller: Principal): Promise<TraceRetentionResponse> {
    await this.transactions.run(async () => {
      await this.retention.put(access.workspaceId, null, days, caller.userId);
      await this.recordChange(access, caller, 'workspace', access.workspaceId, { retention_days: days });
    });
    return this.getWorkspace(access);
  }

  async getDataset(access: WorkspaceAccess, datasetId: string): Promise<DatasetTraceRetentionResponse> {
    await this.requireTraceDataset(access, datasetId);
    const own = await this.retention.find(access.workspaceId, datasetId);
    const workspace = own ? null : await this.retention.find(access.workspaceId, null);
    return {
      dataset_id: datasetId,
      retention_days: own?.retention_days ?? null,
      inherited: !own,
      effective_retention_days: own ? own.retention_days : (workspace?.retention_days ?? null),
    };
  }

  async putDataset(
    access: WorkspaceAccess,
    datasetId: string,
    days: number | null,
    caller: Principal,
  ): Promise<DatasetTraceRetentionResponse> {
    await this.transactions.run(async () => {
      await this.requireTraceDataset(access, datasetId);
      await this.retention.put(access.workspaceId, datasetId, days, caller.userId);
      await this.recordChange(access, caller, 'dataset', datasetId, { retention_days: days });
    });
    return this.getDataset(access, datasetId);
  }

  /** Drops the dataset's own setting: it follows its workspace's again. */
  async inherit(access: WorkspaceAccess, datasetId: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      await this.requireTraceDataset(access, datasetId);
      await this.retention.remove(access.workspaceId, datasetId);
      await this.recordChange(access, caller, 'dataset', datasetId, { inherited: true });
    });
  }

  private async recordChange(
    access: WorkspaceAccess,
    caller: Principal,
    targetType: 'workspace' | 'dataset',
    targetId: string,
    details: Record<string, unknown>,
  ): Promise<void> {
    await this.audit.record({
      actor: caller,
      workspaceId: access.workspaceId,
      action: 'trace_retention.updated',
      targetType,
      targetId,
      details,
    });
  }

  /** Runs the sweep for one workspace now (admins), answering what it removed. */
  sweepNow(access: WorkspaceAccess): Promise<TraceRetentionSweepResponse> {
    return this.sweep(access.workspaceId);
  }

  @JobHandler(TRACE_RETENTION_JOB, { maxAttempts: 3 })
  async sweepAll(): Promise<{
    datasets: number;
    spans_deleted: number;
    scores_deleted: number;
    uploads_deleted: number;
    payloads_cleared: number;
    feedback_deleted: number;
  }> {
    const result = await this.sweep(null);
    await this.transactions.run(() => this.queue.enqueueNextHour(TRACE_RETENTION_JOB, {}));
    return {
      datasets: result.datasets.length,
      spans_deleted: result.datasets.reduce((n, d) => n + d.spans_deleted, 0),
      scores_deleted: result.datasets.reduce((n, d) => n + d.scores_deleted, 0),
      uploads_deleted: result.uploads_deleted,
      payloads_cleared: result.payloads_cleared,
      feedback_deleted: result.feedback_deleted,
    };
  }

  private async sweep(workspaceId: string | null): Promise<TraceRetentionSweepResponse> {
    const sweptAt = new Date();
    const datasets: TraceRetentionSweepResponse['datasets'] = [];
    for (const target of await this.retained(workspaceId)) {
      const swept = await this.sweepDataset(target, sweptAt);
      if (swept.spans_deleted || swept.scores_deleted) datasets.push(swept);
    }
    let uploadsDeleted = 0;
    let payloadsCleared = 0;
    let feedbackDeleted = 0;
    for (const { workspace_id, retention_days } of await this.retention.workspaceDefaults(workspaceId)) {
      const cutoff = new Date(sweptAt.getTime() - retention_days * 24 * HOUR_MS);
      const { paths, cleared, feedback } = await this.transactions.run(async () => {
        const gone = await this.retention.deleteUploadsBefore(workspace_id, cutoff);
        const n = await this.retention.clearPayloadsBefore(workspace_id, cutoff);
        const f = await this.retention.deleteFeedbackBefore(workspace_id, cutoff);
        if (gone.length || n || f)
          await this.audit.record({
            workspaceId: workspace_id,
            action: 'trace_retention.swept',
            targetType: 'workspace',
            targetId: workspace_id,
            details: {
              retention_days,
              cutoff: cutoff.toISOString(),
              uploads_deleted: gone.length,
              payloads_cleared: n,
              feedback_deleted: f,
            },
          });
        return { paths: gone, cleared: n, feedback: f };
      });
      // Files go after the commit: a rollback leaves every upload whole.
      for (const path of paths) await rm(path, { force: true });
      uploadsDeleted += paths.length;
      payloadsCleared += cleared;
      feedbackDeleted += feedback;
    }
    return {
      swept_at: sweptAt,
      datasets,
      uploads_deleted: uploadsDeleted,
      payloads_cleared: payloadsCleared,
      feedback_deleted: feedbackDeleted,
    };
  }

  /**
   * Every trace dataset (of one workspace, or all) with the retention that applies to it, by
   * workspace then dataset: a dataset's own setting (null keeps forever) wins over its workspace's.
   */
  private async retained(workspaceId: string | null): Promise<RetainedDataset[]> {
    const settings = await this.retention.settings(workspaceId);
    if (!settings.length) return [];
    const own = new Map(settings.filter((r) => r.dataset_id).map((r) => [r.dataset_id!, r.retention_days]));
    const defaults = new Map(settings.filter((r) => !r.dataset_id).map((r) => [r.workspace_id, r.retention_days]));
    const datasets = await this.traceDatasets.inWorkspaces([...new Set(settings.map((r) => r.workspace_id))]);
    return datasets.flatMap(({ workspace_id, dataset_id }) => {
      const days = own.has(dataset_id) ? own.get(dataset_id)! : (defaults.get(workspace_id) ?? null);
      return days === null ? [] : [{ workspace_id, dataset_id, retention_days: days }];
    });
  }

  private async sweepDataset(
    target: RetainedDataset,
    now: Date,
  ): Promise<TraceRetentionSweepResponse['datasets'][number]> {
    const cutoff = new Date(now.getTime() - target.retention_days * 24 * HOUR_MS);
    const touched = new Set<number>();
    let deleted = 0;
    for (;;) {
      const batch = await this.transactions.run(async () => {
        if (!(await this.traceDatasets.findLocked(target.workspace_id, target.dataset_id))) return 0;
        const { deleted: n, versions } = await this.datasetWrites.deleteBefore(
          target.dataset_id,
          SPAN_START,
          cutoff,
          SWEEP_BATCH,
        );
        for (const number of versions) touched.add(number);
        return n;
      });
      deleted += batch;
      if (batch < SWEEP_BATCH) break;
    }
    // Scores go by their trace's start time, as spans do: a trace's scores leave with its spans.
    const scoresDeleted = await this.transactions.run(() =>
      this.retention.deleteScoresBefore(target.workspace_id, target.dataset_id, cutoff),
    );
    if (deleted || scoresDeleted) {
      await this.transactions.run(async () => {
        const dataset = await this.traceDatasets.findLocked(target.workspace_id, target.dataset_id);
        if (!dataset) return;
        // Content hashes and column statistics describe the rows the versions hold now.
        if (deleted) await this.datasetWrites.restatVersions(dataset, [...touched]);
        await this.audit.record({
          workspaceId: target.workspace_id,
          action: 'trace_retention.swept',
          targetType: 'dataset',
          targetId: target.dataset_id,
          details: {
            retention_days: target.retention_days,
            cutoff: cutoff.toISOString(),
            spans_deleted: deleted,
            scores_deleted: scoresDeleted,
            versions_updated: touched.size,
          },
        });
      });
    }
    return {
      dataset_id: target.dataset_id,
      retention_days: target.retention_days,
      cutoff,
      spans_deleted: deleted,
      scores_deleted: scoresDeleted,
      versions_updated: touched.size,
    };
  }

  private async requireTraceDataset(access: WorkspaceAccess, datasetId: string): Promise<void> {
    await this.traceDatasets.require(access, datasetId, 'retention applies to trace datasets');
  }
}
