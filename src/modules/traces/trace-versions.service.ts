import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { JOB_STATE_VOCABULARY } from '#libs/queue/tracked-job.js';
import { buildTopology, type TopologySpan } from '#libs/traces/topology.js';
import type { DatasetVersionEntity } from '../datasets/entities/dataset-version.entity.js';
import type { DatasetEntity } from '../datasets/entities/dataset.entity.js';
import { VersionsService } from '../datasets/versions/versions.service.js';
import type { DropsQuery, TraceDropRecordResponse } from './dto/traces.dto.js';
import type {
  CreateGroundTruthRequest,
  DeleteTraceTagsQuery,
  EnrichmentResultsQuery,
  PutTraceTagsRequest,
  RecomputeEnrichmentRequest,
  TopologyGraph,
  TraceCurrentVersionResponse,
  TraceEnrichmentStatusResponse,
  TraceGroundTruthResponse,
  TraceGroundTruthVersionResponse,
  TraceTagResponse,
  TraceTagsQuery,
} from './dto/trace-data.dto.js';
import { TraceFeedbackService } from './feedback/feedback.service.js';
import { TraceScoresService } from './scores/scores.service.js';
import { TRACE_ENRICH_JOB } from './traces.jobs.js';
import { TraceDatasets } from './trace-datasets.service.js';
import { TraceErrors } from './traces.errors.js';
import { TracesRepository } from './traces.repository.js';
import { toDrop, toGroundTruthVersion, toStatus } from './traces.mapper.js';

/** What trace datasets' versions offer: ground truth, promotion, drops, topology, enrichment and tags. */
@Injectable()
export class TraceVersionsService {
  constructor(
    private readonly traces: TracesRepository,
    private readonly versions: VersionsService,
    private readonly traceDatasets: TraceDatasets,
    private readonly queue: JobQueue,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
    private readonly feedback: TraceFeedbackService,
    private readonly scores: TraceScoresService,
  ) {}

  /** A version of a trace dataset of the workspace, by id alone (the /traces/versions paths). */
  async byId(
    access: WorkspaceAccess,
    versionId: string,
  ): Promise<{ dataset: DatasetEntity; version: DatasetVersionEntity }> {
    const version = await this.versions.findById(access.workspaceId, versionId);
    if (!version) throw new NotFoundError('dataset version', versionId);
    return this.traceVersion(access, version.datasetId, versionId);
  }

  /** A version of a trace dataset named by the dataset and version path parameters. */
  async traceVersion(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
  ): Promise<{ dataset: DatasetEntity; version: DatasetVersionEntity }> {
    const found = await this.versions.require(access, datasetId, versionId);
    if (found.dataset.kind !== 'traces')
      throw new DomainError(TraceErrors.not_a_trace_version, `"${found.dataset.name}" holds test cases, not traces`);
    return found;
  }

  // Drops, ground truth, promotion

  async versionDrops(
    access: WorkspaceAccess,
    versionId: string,
    query: DropsQuery,
  ): Promise<TraceDropRecordResponse[]> {
    const { version } = await this.byId(access, versionId);
    return (await this.traces.versionDrops(version.id, query.reason, query.limit, query.offset)).map(toDrop);
  }

  async createGroundTruth(
    access: WorkspaceAccess,
    versionId: string,
    body: CreateGroundTruthRequest,
    caller: Principal,
  ): Promise<TraceGroundTruthVersionResponse> {
    const { dataset, version } = await this.byId(access, versionId);
    const ids = [...new Set(body.items.map((i) => i.trace_id))];
    if (ids.length !== body.items.length) {
      const seen = new Set<string>();
      const twice = body.items.map((i) => i.trace_id).filter((id) => (seen.has(id) ? true : (seen.add(id), false)));
      throw new DomainError(
        TraceErrors.unknown_traces,
        `Each trace takes one expected output; named twice: ${[...new Set(twice)].slice(0, 5).join(', ')}`,
        { trace_ids: [...new Set(twice)].slice(0, 20) },
      );
    }
    await this.requireTraces(dataset.id, version, ids);
    const row = await this.transactions.run(async () => {
      const created = await this.traces.insertGroundTruth({
        workspace_id: access.workspaceId,
        dataset_id: dataset.id,
        version_id: version.id,
        message: body.message ?? '',
        items: body.items.map((i) => ({
          trace_id: i.trace_id,
          expected_output: i.expected_output,
          ...(i.notes !== undefined ? { notes: i.notes } : {}),
          ...(i.labels ? { labels: i.labels } : {}),
        })),
        item_count: body.items.length,
        created_by: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'ground_truth.created',
        targetType: 'dataset',
        targetId: dataset.id,
        details: { version_id: version.id, number: created.number, items: created.item_count },
      });
      return created;
    });
    return toGroundTruthVersion(row);
  }

  async groundTruth(
    access: WorkspaceAccess,
    versionId: string,
    number: number | undefined,
  ): Promise<TraceGroundTruthResponse> {
    const { version } = await this.byId(access, versionId);
    const row = await this.traces.groundTruth(version.id, number);
    if (!row)
      throw new DomainError(
        TraceErrors.ground_truth_not_found,
        number
          ? `Version ${version.number} has no ground truth number ${number}`
          : `Version ${version.number} has no ground truth yet`,
      );
    return {
      ...toGroundTruthVersion(row),
      items: row.items as unknown as TraceGroundTruthResponse['items'],
      versions: await this.traces.groundTruthNumbers(version.id),
    };
  }

  async promote(access: WorkspaceAccess, versionId: string, caller: Principal): Promise<TraceCurrentVersionResponse> {
    const { dataset, version } = await this.byId(access, versionId);
    const previous = dataset.currentVersionId;
    const promoted = await this.versions.promote(access, dataset.id, version.id, caller);
    return {
      dataset_id: dataset.id,
      version_id: promoted.id,
      number: promoted.number,
      state: promoted.state,
      previous_version_id: previous && previous !== promoted.id ? previous : null,
      promoted_at: promoted.promoted_at!,
    };
  }

  // Topology

  async topology(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    tag: string | undefined,
  ): Promise<TopologyGraph> {
    const { version } = await this.traceVersion(access, datasetId, versionId);
    const tagged = tag
      ? new Set((await this.traces.listTags(version.id, undefined, tag)).map((t) => t.trace_id))
      : null;
    const spans: TopologySpan[] = [];
    for await (const page of this.traceDatasets.spansByTrace(datasetId, version.number)) {
      for (const s of page) {
        if (tagged && !tagged.has(String(s.trace_id))) continue;
        spans.push({
          trace_id: String(s.trace_id),
          span_id: String(s.span_id),
          parent_span_id: (s.parent_span_id as string | null) ?? null,
          name: String(s.name ?? ''),
          kind: s.kind as TopologySpan['kind'],
          duration_ms: Number(s.duration_ms ?? 0),
          status: s.status as TopologySpan['status'],
          service_name: (s.service_name as string | null) ?? null,
        });
      }
    }
    const graph = buildTopology(spans);
    return {
      dataset_id: datasetId,
      version_id: version.id,
      ...(graph as unknown as Omit<TopologyGraph, 'dataset_id' | 'version_id'>),
    };
  }

  // Enrichment

  async enrichmentStatus(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
  ): Promise<TraceEnrichmentStatusResponse> {
    const { version } = await this.traceVersion(access, datasetId, versionId);
    return toStatus(datasetId, version.id, await this.traces.latestEnrichmentRun(version.id));
  }

  async recompute(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    body: RecomputeEnrichmentRequest,
    caller: Principal,
  ): Promise<TraceEnrichmentStatusResponse> {
    const { version } = await this.traceVersion(access, datasetId, versionId);
    const prices = body.prices ? checkPrices(body.prices) : null;
    const run = await this.transactions.run(async () => {
      const created = await this.traces.insertEnrichmentRun({
        workspace_id: access.workspaceId,
        dataset_id: datasetId,
        version_id: version.id,
        trigger: 'recompute',
        prices,
        created_by: caller.userId,
      });
      const { job } = await this.queue.enqueue({
        type: TRACE_ENRICH_JOB,
        payload: { enrichment_run_id: created.id },
        workspaceId: access.workspaceId,
        targetType: 'dataset',
        targetId: datasetId,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'trace_enrichment.recomputed',
        targetType: 'dataset',
        targetId: datasetId,
        details: { version_id: version.id, enrichment_run_id: created.id, prices: prices !== null },
      });
      return { ...created, job_id: job.id };
    });
    return toStatus(datasetId, version.id, run);
  }

  /** Per-trace results, filtered and sorted in the database, paged by limit and offset. */
  async enrichmentResults(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    query: EnrichmentResultsQuery,
  ): Promise<Record<string, unknown>> {
    const { version } = await this.traceVersion(access, datasetId, versionId);
    const sort = query.sort ?? 'start_time';
    const page = await this.traces.enrichmentPage(
      version.id,
      query,
      { by: sort, direction: query.order ?? 'asc' },
      { skip: query.offset, take: query.limit },
    );
    const status = await this.traces.latestEnrichmentRun(version.id);
    // Each trace's end-user feedback, summed up by name, and its online evaluation scores, beside what its spans say.
    const traceIds = page.items.map((item) => String(item.trace_id));
    const feedback = await this.feedback.summariesFor(access.workspaceId, traceIds);
    const scores = await this.scores.ofTraces(access.workspaceId, datasetId, traceIds);
    return {
      dataset_id: datasetId,
      version_id: version.id,
      state: status ? JOB_STATE_VOCABULARY.show(status.state) : 'not_started',
      items: page.items.map((item) => ({
        ...item,
        feedback: feedback.get(String(item.trace_id)) ?? {},
        scores: scores.get(String(item.trace_id)) ?? {},
      })),
      total: page.total,
      limit: query.limit,
      offset: query.offset,
      sort,
      order: query.order ?? 'asc',
    };
  }

  // Tags

  async listTags(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    query: TraceTagsQuery,
  ): Promise<TraceTagResponse[]> {
    const { version } = await this.traceVersion(access, datasetId, versionId);
    return this.traces.listTags(version.id, query.trace_id, query.tag);
  }

  async putTags(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    body: PutTraceTagsRequest,
    caller: Principal,
  ): Promise<TraceTagResponse[]> {
    const { version } = await this.traceVersion(access, datasetId, versionId);
    const traceIds = [...new Set(body.trace_ids)];
    const tags = [...new Set(body.tags)];
    if (!tags.length && body.mode !== 'replace')
      throw new DomainError(
        TraceErrors.trace_tags_query_invalid,
        "Adding no tag changes nothing: name `tags`, or use mode `replace` with an empty list to clear the traces' tags",
      );
    await this.requireTraces(datasetId, version, traceIds);
    await this.transactions.run(async () => {
      await this.traces.putTags(
        { workspace_id: access.workspaceId, dataset_id: datasetId, version_id: version.id, created_by: caller.userId },
        traceIds,
        tags,
        body.mode === 'replace',
      );
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'trace_tags.set',
        targetType: 'dataset',
        targetId: datasetId,
        details: { version_id: version.id, traces: traceIds.length, tags, mode: body.mode ?? 'add' },
      });
    });
    const wanted = new Set(traceIds);
    return (await this.traces.listTags(version.id)).filter((t) => wanted.has(t.trace_id));
  }

  async deleteTags(
    access: WorkspaceAccess,
    datasetId: string,
    versionId: string,
    query: DeleteTraceTagsQuery,
    caller: Principal,
  ): Promise<void> {
    const { version } = await this.traceVersion(access, datasetId, versionId);
    if (!query.trace_id && !query.tag)
      throw new DomainError(
        TraceErrors.trace_tags_query_invalid,
        'Name `trace_id`, `tag` or both: which tags to remove',
      );
    const removed = await this.traces.deleteTags(version.id, query.trace_id, query.tag);
    await this.audit.record({
      actor: caller,
      workspaceId: access.workspaceId,
      action: 'trace_tags.removed',
      targetType: 'dataset',
      targetId: datasetId,
      details: { version_id: version.id, trace_id: query.trace_id ?? null, tag: query.tag ?? null, removed },
    });
  }

  private async requireTraces(datasetId: string, version: DatasetVersionEntity, traceIds: string[]): Promise<void> {
    const known = await this.traceDatasets.knownTraces(datasetId, version.number, traceIds);
    const unknown = traceIds.filter((id) => !known.has(id));
    if (unknown.length)
      throw new DomainError(
        TraceErrors.unknown_traces,
        `Version ${version.number} has no trace ${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? ` (and ${unknown.length - 5} more)` : ''}`,
        { trace_ids: unknown.slice(0, 20) },
      );
  }
}

function checkPrices(prices: Record<string, unknown>): Record<string, { input_per_1m: number; output_per_1m: number }> {
  const out: Record<string, { input_per_1m: number; output_per_1m: number }> = {};
  for (const [model, price] of Object.entries(prices)) {
    const p = price as { input_per_1m?: unknown; output_per_1m?: unknown } | null;
    const ok = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
    if (
      !model.trim() ||
      !p ||
      typeof p !== 'object' ||
      !ok(p.input_per_1m) ||
      !ok(p.output_per_1m) ||
      Object.keys(p).length !== 2
    ) {
      throw new DomainError(
        TraceErrors.prices_invalid,
        `prices["${model}"] must be { "input_per_1m": <USD>, "output_per_1m": <USD> }, both non-negative numbers`,
        { model },
      );
    }
    out[model] = { input_per_1m: p.input_per_1m as number, output_per_1m: p.output_per_1m as number };
  }
  return out;
}
