import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { AccessRepository } from '#libs/auth/access.repository.js';
import { WorkspaceResourceRegistry } from '#libs/auth/workspace-resource.registry.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import { AppConfig } from '#libs/config/app-config.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { MetricConfigsService } from '../catalogues/metrics/metric-configs.service.js';
import { RunSourceService } from '../datasets/run-source.service.js';
import { ProjectsService } from '../projects/projects.service.js';
import type {
  CreateRunRequest,
  EventsQuery,
  ListRunsQuery,
  RerunRequest,
  RunEventResponse,
  RunResponse,
  SutRunsQuery,
} from './dto/run.dto.js';
import type { UploadOutputsRequest } from './dto/upload.dto.js';
import { RecordedRuns } from './execution/recorded-runs.service.js';
import { TERMINAL_RUN_STATES, type RunEntity } from './entities/run.entity.js';
import { CANCELLED, RunExecutor } from './execution/run-executor.job.js';
import { RUN_JOB } from './runs.jobs.js';
import { toEventResponse, toRunResponse } from './runs.mapper.js';
import { JudgeValidityService } from './validity/judge-validity.service.js';
import { RunPlanner } from './execution/run-planner.service.js';
import { RunErrors } from './runs.errors.js';
import { RunsRepository } from './runs.repository.js';

const CANCEL_WAIT_MS = 5000;

/** Starting, listing, cancelling, rerunning and feeding runs; their execution is RunExecutor's. */
/**
 * A run's items are created this many pages (RUN_PAGE_SIZE) of rows a statement (2,500 rows at
 * the default): a short statement even on a slow machine (docs/performance.md#a-runs-items-in-chunks),
 * so node's thread, which the embedded database runs on, is never held long (RunsRepository.materialize).
 */
export const MATERIALIZE_PAGES = 5;

@Injectable()
export class RunsService {
  constructor(
    private readonly runs: RunsRepository,
    private readonly planner: RunPlanner,
    private readonly sources: RunSourceService,
    private readonly metricConfigs: MetricConfigsService,
    private readonly executor: RunExecutor,
    private readonly queue: JobQueue,
    private readonly access: AccessRepository,
    private readonly registry: WorkspaceResourceRegistry,
    private readonly projects: ProjectsService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
    private readonly config: AppConfig,
    private readonly validity: JudgeValidityService,
    private readonly recorded: RecordedRuns,
  ) {}

  /** Snapshots the inputs, creates one item per row (and repetition), freezes the metric config versions used, and queues the run (offline runs wait for an upload). */
  async create(access: WorkspaceAccess, body: CreateRunRequest, caller: Principal): Promise<RunResponse> {
    if (!body.eval_config_id && !body.metrics)
      throw new DomainError(RunErrors.metrics_required, 'Name an eval_config_id or `metrics` to score the run with');
    const source = await this.sources.resolve(access.workspaceId, body.dataset_id, body.version_id, body.partition_id);
    const recorded = body.traces ? await this.recorded.spec(access, body) : null;
    // Answered from the unit of work that queues it: the run as it was made, before a worker starts it.
    return this.transactions.run(async () => {
      const snapshot = await this.planner.snapshot(access.workspaceId, source, {
        sutId: body.sut_id,
        connectionId: body.connection_id,
        evalConfigId: body.eval_config_id,
        metrics: body.metrics,
        judgeId: body.judge_id,
      });
      const spec = snapshot.connection.spec;
      const offline = spec.kind === 'offline';
      if (recorded && !offline)
        throw new DomainError(
          RunErrors.run_input_invalid,
          'A run over recorded traces calls nothing: name an offline connection of the SUT that recorded them',
          { field: 'connection_id' },
        );
      snapshot.recorded = recorded;
      const run = await this.runs.save({
        workspaceId: access.workspaceId,
        name: body.name || `${snapshot.sut.name} on ${source.datasetName} v${source.versionNumber}`,
        datasetId: source.datasetId,
        versionId: source.versionId,
        partitionId: source.partitionId,
        sutId: snapshot.sut.id,
        connectionId: snapshot.connection.id,
        evalConfigId: snapshot.eval_config?.id ?? null,
        snapshot,
        concurrency: Math.min(body.concurrency ?? spec.max_concurrency, spec.max_concurrency),
        sample: body.sample ? { size: body.sample.size, seed: body.sample.seed ?? 0 } : null,
        repetitions: body.repetitions ?? 1,
        tags: [...new Set(body.tags ?? [])],
        createdBy: caller.userId,
      });
      run.total = recorded
        ? await this.recorded.materialize(run.id, access.workspaceId, source, recorded)
        : await this.runs.materialize(run.id, access.workspaceId, source, {
            repetitions: run.repetitions,
            sample: run.sample,
            chunkRows: this.config.env.RUN_PAGE_SIZE * MATERIALIZE_PAGES,
          });
      if (!run.total)
        throw new DomainError(
          RunErrors.run_input_invalid,
          `The ${source.partitionId ? 'partition' : 'version'} has no rows to run`,
          { field: source.partitionId ? 'partition_id' : 'version_id' },
        );
      await this.metricConfigs.markUsed(
        snapshot.metrics.flatMap((m) => (m.config ? [m.config.id] : [])),
        run.id,
      );
      // Recorded traces are answered already: the run is queued to score them.
      await this.start(access, run, offline && !recorded, caller);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'run.created',
        targetType: 'run',
        targetId: run.id,
        details: { sut_id: run.sutId, dataset_id: run.datasetId, version_id: run.versionId, items: run.total },
      });
      return this.get(access, run.id);
    });
  }

  async list(caller: Principal, query: ListRunsQuery, workspaceIds?: string[]): Promise<Page<RunResponse>> {
    const own = query.workspace_id ?? caller.apiKey?.workspaceId;
    const ids = workspaceIds ?? (own ? [own] : await this.access.workspaceIdsOf(caller.userId));
    if (!ids.length) return { items: [], total: 0, page: query.page, page_size: query.page_size };
    // A filter naming a SUT or dataset outside the listed workspaces is an unknown record, not an empty list.
    if (query.sut_id && !ids.includes((await this.registry.resolve('sut', query.sut_id)) ?? ''))
      throw new NotFoundError('SUT', query.sut_id);
    if (query.dataset_id && !ids.includes((await this.registry.resolve('dataset', query.dataset_id)) ?? ''))
      throw new NotFoundError('dataset', query.dataset_id);
    const project = query.project_id ? await this.projects.links(ids, query.project_id) : undefined;
    if (project === null) throw new NotFoundError('project', query.project_id!);
    const [rows, total] = await this.runs.page(
      {
        workspaceIds: ids,
        sutId: query.sut_id,
        datasetId: query.dataset_id,
        state: query.state,
        tag: query.tag,
        project,
        gate: { verdict: query.gate_verdict, label: query.gate_label },
      },
      pageWindow(query),
    );
    return pageOf(rows, total, query, (r) => toRunResponse(r));
  }

  async sutRuns(access: WorkspaceAccess, sutId: string, query: SutRunsQuery): Promise<Page<RunResponse>> {
    const [rows, total] = await this.runs.page(
      { workspaceIds: [access.workspaceId], sutId, state: query.state },
      pageWindow(query),
    );
    return pageOf(rows, total, query, (r) => toRunResponse(r));
  }

  async get(access: WorkspaceAccess, id: string): Promise<RunResponse> {
    const run = await this.require(access, id);
    const response = toRunResponse(run, await this.runs.counts(run));
    // Judged metrics' pass rates corrected for their judges' validated errors, as of now (never stored).
    const summary = await this.validity.withCorrected(run, run.summary);
    return { ...response, summary: summary as unknown as Record<string, unknown> | null };
  }

  /** Stops new calls at once; the run ends `cancelled` with what was done kept. Waits a few seconds for the worker to stop. */
  async cancel(access: WorkspaceAccess, id: string, caller: Principal): Promise<RunResponse> {
    const run = await this.require(access, id);
    if (TERMINAL_RUN_STATES.has(run.state))
      throw new DomainError(RunErrors.run_not_active, `Run ${id} has already ended (${run.state})`);
    await this.transactions.run(async () => {
      const locked = await this.runs.findForUpdate(access.workspaceId, id);
      if (!locked || TERMINAL_RUN_STATES.has(locked.state)) return;
      locked.cancelRequestedAt = new Date();
      await this.runs.save(locked);
      await this.runs.appendEvent(id, access.workspaceId, 'cancel_requested', { by: caller.userId });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'run.cancelled',
        targetType: 'run',
        targetId: id,
        details: { state: locked.state },
      });
    });
    if (run.state === 'awaiting_upload' || !run.jobId) await this.executor.finish(id, CANCELLED);
    else await this.queue.cancel(run.jobId);
    const deadline = Date.now() + CANCEL_WAIT_MS;
    while (Date.now() < deadline && !TERMINAL_RUN_STATES.has((await this.runs.find(access.workspaceId, id))!.state))
      await new Promise((resolve) => setTimeout(resolve, 50));
    return this.get(access, id);
  }

  /** A new run with the same snapshot, over all rows or only the failed ones. */
  async rerun(access: WorkspaceAccess, id: string, body: RerunRequest, caller: Principal): Promise<RunResponse> {
    const source = await this.require(access, id);
    if (!TERMINAL_RUN_STATES.has(source.state))
      throw new DomainError(
        RunErrors.run_still_active,
        `Run ${id} is ${source.state}; rerun it once it has ended (or cancel it)`,
      );
    const mode = body.mode ?? 'all';
    return this.transactions.run(async () => {
      const recorded = !!source.snapshot.recorded;
      const offline = source.snapshot.connection.spec.kind === 'offline' && !recorded;
      const run = await this.runs.save({
        workspaceId: access.workspaceId,
        name: `${source.name} (rerun${mode === 'all' ? '' : ` of ${mode}`})`,
        datasetId: source.datasetId,
        versionId: source.versionId,
        partitionId: source.partitionId,
        sutId: source.sutId,
        connectionId: source.connectionId,
        evalConfigId: source.evalConfigId,
        snapshot: source.snapshot,
        concurrency: source.concurrency,
        sample: source.sample,
        repetitions: source.repetitions,
        tags: source.tags,
        rerunOf: source.id,
        rerunMode: mode,
        createdBy: caller.userId,
      });
      run.total = await this.runs.materializeFrom(run.id, access.workspaceId, source.id, mode, recorded);
      if (!run.total)
        throw new DomainError(
          RunErrors.nothing_to_rerun,
          mode === 'errors' ? `Run ${id} has no rows whose call failed` : `Run ${id} has no failed rows`,
        );
      await this.start(access, run, offline, caller, { rerun_of: source.id, mode });
      await this.runs.appendEvent(source.id, access.workspaceId, 'rerun_started', { run_id: run.id, mode });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'run.rerun',
        targetType: 'run',
        targetId: run.id,
        details: { rerun_of: source.id, mode, items: run.total },
      });
      return this.get(access, run.id);
    });
  }

  /** Outputs of an offline run, by row id; scoring is queued unless `complete: false`. */
  async upload(
    access: WorkspaceAccess,
    id: string,
    body: UploadOutputsRequest,
    caller: Principal,
  ): Promise<RunResponse> {
    return this.transactions.run(async () => {
      const run = await this.runs.findForUpdate(access.workspaceId, id);
      if (!run) throw new NotFoundError('run', id);
      if (run.state !== 'awaiting_upload')
        throw new DomainError(
          RunErrors.run_not_awaiting_upload,
          `Run ${id} is ${run.state}; outputs are uploaded to offline runs awaiting them`,
        );
      const unknown = await this.runs.uploadOutputs(
        id,
        body.results.map((r) => ({
          row_id: r.row_id,
          status: r.error || r.output === null ? 'error' : 'done',
          output: r.output,
          latency_ms: r.latency_ms ?? null,
          usage: r.usage
            ? {
                prompt_tokens: r.usage.prompt_tokens ?? null,
                completion_tokens: r.usage.completion_tokens ?? null,
                total_tokens: r.usage.total_tokens ?? null,
              }
            : null,
          cost_usd: r.cost_usd ?? null,
          extras: r.extras ?? null,
          error:
            r.error ??
            (r.output === null ? { code: 'no_output', message: 'the upload gave no output for this row' } : null),
          attempts: null,
        })),
      );
      if (unknown.length)
        throw new DomainError(
          RunErrors.upload_invalid,
          `${unknown.length} uploaded row ids are not rows of the run, e.g. ${unknown.slice(0, 5).join(', ')}`,
          { unknown_row_ids: unknown.slice(0, 100) },
        );
      await this.runs.appendEvent(id, access.workspaceId, 'upload_received', {
        outputs: body.results.length,
        complete: body.complete ?? true,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'run.outputs_uploaded',
        targetType: 'run',
        targetId: id,
        details: { outputs: body.results.length, complete: body.complete ?? true },
      });
      if (body.complete === false) return this.get(access, id);
      await this.enqueue(access, id, caller);
      await this.runs.appendEvent(id, access.workspaceId, 'state_changed', { from: 'awaiting_upload', to: 'queued' });
      return this.get(access, id);
    });
  }

  /** A materialised run starts (its total counted) and says so in its first event. */
  private async start(
    access: WorkspaceAccess,
    run: RunEntity,
    offline: boolean,
    caller: Principal,
    event: Record<string, unknown> = {},
  ): Promise<void> {
    // An offline run stays queued without a job (awaiting_upload) until its outputs are uploaded.
    if (!offline) await this.enqueue(access, run.id, caller);
    await this.runs.save(run);
    await this.runs.appendEvent(run.id, access.workspaceId, 'state_changed', {
      from: null,
      to: offline ? 'awaiting_upload' : 'queued',
      total: run.total,
      ...event,
    });
  }

  /** Queues the run's job: the queue names it on the run (`job_id`) in this unit of work and keeps the run's state with it. */
  private async enqueue(access: WorkspaceAccess, runId: string, caller: Principal): Promise<void> {
    await this.queue.enqueue({
      type: RUN_JOB,
      payload: { run_id: runId },
      workspaceId: access.workspaceId,
      targetType: 'run',
      targetId: runId,
      createdBy: caller.userId,
    });
  }

  async events(access: WorkspaceAccess, id: string, query: EventsQuery): Promise<RunEventResponse[]> {
    await this.require(access, id);
    return (await this.runs.events(id, query.after ?? 0, query.limit ?? 500)).map(toEventResponse);
  }

  async require(access: WorkspaceAccess, id: string): Promise<RunEntity> {
    const run = await this.runs.find(access.workspaceId, id);
    if (!run) throw new NotFoundError('run', id);
    return run;
  }
}
