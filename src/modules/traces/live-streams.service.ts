import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { TrackedRecords } from '#libs/queue/tracked-records.service.js';
import { VersionsService } from '../datasets/versions/versions.service.js';
import type { PutTraceLiveSettingsRequest, TraceLiveStreamResponse } from './dto/live.dto.js';
import { LiveLanding } from './live-landing.job.js';
import { LiveRepository, type LiveStreamRow } from './live.repository.js';
import { TraceDatasets } from './trace-datasets.service.js';
import { idleLiveStreamResponse, toLiveStreamResponse } from './traces.mapper.js';
import { TRACE_INGEST_RUNS, TracesRepository } from './traces.repository.js';

/** A trace dataset's live stream as users see and set it: the open head, its window and size, pending spans. */
@Injectable()
export class LiveStreamsService {
  constructor(
    private readonly live: LiveRepository,
    private readonly traces: TracesRepository,
    private readonly tracked: TrackedRecords,
    private readonly landing: LiveLanding,
    private readonly traceDatasets: TraceDatasets,
    private readonly versions: VersionsService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  async get(access: WorkspaceAccess, datasetId: string): Promise<TraceLiveStreamResponse> {
    await this.requireTraceDataset(access, datasetId);
    const stream = await this.live.find(datasetId);
    return stream ? this.response(stream) : idleLiveStreamResponse(access.workspaceId, datasetId);
  }

  async configure(
    access: WorkspaceAccess,
    datasetId: string,
    body: PutTraceLiveSettingsRequest,
    caller: Principal,
  ): Promise<TraceLiveStreamResponse> {
    const stream = await this.transactions.run(async () => {
      await this.requireTraceDataset(access, datasetId);
      await this.open(datasetId, access.workspaceId, caller.userId);
      await this.live.updateSettings(datasetId, body);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'trace_live.configured',
        targetType: 'dataset',
        targetId: datasetId,
        details: { ...body },
      });
      return (await this.live.find(datasetId))!;
    });
    return this.response(stream);
  }

  /**
   * The dataset's stream, opened with its ingest run on first use; concurrent first uses open one.
   * Inside the caller's unit of work. The run is a tracked record (docs/architecture.md#background-work)
   * that no one job settles: it is marked running through TrackedRecords when the stream opens and
   * stays running while the stream lives, its counters moved by each export and landing batch.
   */
  async open(datasetId: string, workspaceId: string, createdBy: string | null): Promise<LiveStreamRow> {
    const existing = await this.live.find(datasetId);
    if (existing) return existing;
    await this.live.lockCreation(datasetId);
    const raced = await this.live.find(datasetId);
    if (raced) return raced;
    const run = await this.traces.insertRun({
      workspace_id: workspaceId,
      dataset_id: datasetId,
      source_kind: 'otlp',
      upload_id: null,
      connection_id: null,
      inline_records: null,
      options: { dataset_id: datasetId, convention: 'auto', keep_unmapped: true },
      created_by: createdBy,
    });
    await this.tracked.start(TRACE_INGEST_RUNS, run.id);
    return this.live.insert(datasetId, workspaceId, run.id, createdBy);
  }

  /** Seals the open head now: the next span opens a new version. */
  async seal(access: WorkspaceAccess, datasetId: string, caller: Principal): Promise<TraceLiveStreamResponse> {
    const stream = await this.transactions.run(async () => {
      await this.requireTraceDataset(access, datasetId);
      if (!(await this.live.find(datasetId))) return null;
      const sealed = await this.landing.sealNow(datasetId);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'trace_live.sealed',
        targetType: 'dataset',
        targetId: datasetId,
        details: { version_id: sealed },
      });
      return (await this.live.find(datasetId))!;
    });
    // A dataset that never received a span has nothing to seal.
    return stream ? this.response(stream) : idleLiveStreamResponse(access.workspaceId, datasetId);
  }

  /** The stream's response: its head version's number read first, then mapped. */
  private async response(stream: LiveStreamRow): Promise<TraceLiveStreamResponse> {
    const head = stream.head_version_id
      ? await this.versions.findById(stream.workspace_id, stream.head_version_id)
      : null;
    return toLiveStreamResponse(stream, head?.number ?? null);
  }

  private async requireTraceDataset(access: WorkspaceAccess, datasetId: string): Promise<void> {
    await this.traceDatasets.require(access, datasetId, 'live streams belong to trace datasets');
  }
}
