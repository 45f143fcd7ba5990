import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import type { JsonObject } from '#libs/database/schema.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { MAPPED_FIELDS } from '#libs/evaluation/online/targets.js';
import { JudgesService } from '../catalogues/judges/judges.service.js';
import { DatasetsService } from '../datasets/datasets.service.js';
import { RunPlanner } from '../runs/execution/run-planner.service.js';
import { ReviewItemsService } from '../review/review-items.service.js';
import { SPAN_COLUMNS, TraceDatasets } from '../traces/trace-datasets.service.js';
import type {
  BackfillResponse,
  CreateBackfillRequest,
  CreateOnlineEvaluatorRequest,
  EvaluatorTargetResponse,
  EvaluatorVersionList,
  ListEvaluatorTargetsQuery,
  ListOnlineEvaluatorsQuery,
  OnlineEvaluatorResponse,
  UpdateOnlineEvaluatorRequest,
} from './dto/online.dto.js';
import { toBackfillResponse, toEvaluatorResponse, toTargetResponse, toVersionResponse } from './online.mapper.js';
import { OnlineRepository, type EvaluatorRow } from './online.repository.js';
import { sameSpec, specOf, type EvaluatorSpec } from './online.rules.js';
import { OnlineErrors } from './online.errors.js';
import { OnlineFollow } from './online-follow.job.js';
import { ONLINE_BACKFILL_JOB } from './online.jobs.js';
import { PageQueryDto } from '#libs/common/pagination.js';

/** The longest range a backfill covers. */
const MAX_BACKFILL_DAYS = 366;
const SPAN_FIELDS = new Set<string>(SPAN_COLUMNS);

/**
 * Online evaluators: created on a trace dataset, versioned like metric configs (a change of what
 * they score makes the next version; targets of older versions still waiting are superseded),
 * paused and resumed, listed with their progress and targets; backfills of past time ranges.
 */
@Injectable()
export class OnlineEvaluatorsService {
  constructor(
    private readonly repo: OnlineRepository,
    private readonly traces: TraceDatasets,
    private readonly datasets: DatasetsService,
    private readonly planner: RunPlanner,
    private readonly judges: JudgesService,
    private readonly review: ReviewItemsService,
    private readonly follow: OnlineFollow,
    private readonly queue: JobQueue,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  async create(
    access: WorkspaceAccess,
    body: CreateOnlineEvaluatorRequest,
    caller: Principal,
  ): Promise<OnlineEvaluatorResponse> {
    const spec = specOf(body, null);
    const id = await this.transactions.run(async () => {
      const dataset = await this.traces.require(access, body.dataset_id, 'online evaluators score trace datasets');
      await this.check(access, dataset.id, spec);
      if (await this.repo.nameTaken(access.workspaceId, body.name)) throw nameTaken(body.name);
      const created = await this.repo.insertEvaluator({
        workspace_id: access.workspaceId,
        dataset_id: dataset.id,
        name: body.name,
        description: body.description ?? '',
        state: body.state ?? 'active',
        // Continuous scoring starts with what lands from now on; what landed before is a backfill's.
        cursor_ordinal: String(dataset.nextOrdinal - 1),
        created_by: caller.userId,
      });
      await this.repo.insertVersion(created.id, 1, spec as unknown as JsonObject, caller.userId);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'online_evaluator.created',
        targetType: 'online_evaluator',
        targetId: created.id,
        details: { name: created.name, dataset_id: dataset.id, level: spec.level, sampling_rate: spec.sampling_rate },
      });
      return created.id;
    });
    return this.get(access, id);
  }

  async list(access: WorkspaceAccess, query: ListOnlineEvaluatorsQuery): Promise<Page<OnlineEvaluatorResponse>> {
    if (query.dataset_id) await this.datasets.require(access, query.dataset_id);
    const { rows, total } = await this.repo.page(
      access.workspaceId,
      { datasetId: query.dataset_id, state: query.state },
      pageWindow(query),
    );
    const answers = await Promise.all(rows.map((r) => this.response(r)));
    return pageOf(answers, total, query, (a) => a);
  }

  async get(access: WorkspaceAccess, id: string): Promise<OnlineEvaluatorResponse> {
    return this.response(await this.require(access, id));
  }

  /** Changes the evaluator; a change of what it scores is its next version. */
  async update(
    access: WorkspaceAccess,
    id: string,
    body: UpdateOnlineEvaluatorRequest,
    caller: Principal,
  ): Promise<OnlineEvaluatorResponse> {
    await this.transactions.run(async () => {
      const evaluator = await this.require(access, id, true);
      const current = (await this.repo.version(id, evaluator.version))!.spec as EvaluatorSpec;
      const spec = specOf(body, current);
      const changed = !sameSpec(spec, current);
      if (changed) await this.check(access, evaluator.dataset_id, spec);
      if (body.name !== undefined && (await this.repo.nameTaken(access.workspaceId, body.name, id)))
        throw nameTaken(body.name);
      const version = changed ? evaluator.version + 1 : evaluator.version;
      if (changed) {
        await this.repo.insertVersion(id, version, spec as unknown as JsonObject, caller.userId);
        await this.repo.supersede(id, version);
      }
      const updated = await this.repo.update(id, {
        name: body.name ?? evaluator.name,
        description: body.description ?? evaluator.description,
        state: body.state ?? evaluator.state,
        version,
        // A change is the user's answer to `misconfigured`: the next follow tries again.
        ...(evaluator.status === 'misconfigured' ? { status: 'ok', status_detail: null } : {}),
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'online_evaluator.updated',
        targetType: 'online_evaluator',
        targetId: id,
        details: { version, state: updated.state, new_version: changed },
      });
      await this.follow.wake(updated);
    });
    return this.get(access, id);
  }

  async delete(access: WorkspaceAccess, id: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      const evaluator = await this.require(access, id, true);
      await this.repo.remove(access.workspaceId, id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'online_evaluator.deleted',
        targetType: 'online_evaluator',
        targetId: id,
        details: { name: evaluator.name },
      });
    });
  }

  async versions(access: WorkspaceAccess, id: string): Promise<EvaluatorVersionList> {
    await this.require(access, id);
    return { items: (await this.repo.versions(id)).map(toVersionResponse) };
  }

  async targets(
    access: WorkspaceAccess,
    id: string,
    query: ListEvaluatorTargetsQuery,
  ): Promise<Page<EvaluatorTargetResponse>> {
    await this.require(access, id);
    if (query.backfill_id) {
      const backfill = await this.repo.findBackfill(access.workspaceId, query.backfill_id);
      if (backfill?.evaluator_id !== id) throw new NotFoundError('online backfill', query.backfill_id);
    }
    const { rows, total } = await this.repo.targetPage(
      id,
      { version: query.version, state: query.state, backfillId: query.backfill_id, traceId: query.trace_id },
      pageWindow(query),
    );
    return pageOf(rows, total, query, toTargetResponse);
  }

  /** Queues a backfill of the range with the current version (members): 202 with the tracked record. */
  async startBackfill(
    access: WorkspaceAccess,
    id: string,
    body: CreateBackfillRequest,
    caller: Principal,
  ): Promise<BackfillResponse> {
    const from = new Date(body.from);
    const to = new Date(body.to);
    if (!(from < to) || to.getTime() - from.getTime() > MAX_BACKFILL_DAYS * 86_400_000)
      throw new DomainError(
        OnlineErrors.backfill_range_invalid,
        `from (${body.from}) must be before to (${body.to}), at most ${MAX_BACKFILL_DAYS} days apart`,
        { field: 'from' },
      );
    const backfill = await this.transactions.run(async () => {
      const evaluator = await this.require(access, id, true);
      const created = await this.repo.insertBackfill({
        workspace_id: access.workspaceId,
        evaluator_id: id,
        evaluator_version: evaluator.version,
        from_time: from,
        to_time: to,
        created_by: caller.userId,
      });
      await this.queue.enqueue({
        type: ONLINE_BACKFILL_JOB,
        payload: { backfill_id: created.id },
        workspaceId: access.workspaceId,
        targetType: 'online_backfill',
        targetId: created.id,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'online_backfill.started',
        targetType: 'online_evaluator',
        targetId: id,
        details: { backfill_id: created.id, from: body.from, to: body.to, version: evaluator.version },
      });
      return created;
    });
    return this.backfill(access, backfill.id);
  }

  async backfills(access: WorkspaceAccess, id: string, query: PageQueryDto): Promise<Page<BackfillResponse>> {
    await this.require(access, id);
    const { rows, total } = await this.repo.backfillPage(id, pageWindow(query));
    const counts = await Promise.all(rows.map((b) => this.repo.counts(b.evaluator_id, b.evaluator_version, b.id)));
    return pageOf(
      rows.map((b, i) => ({ b, c: counts[i] })),
      total,
      query,
      ({ b, c }) => toBackfillResponse(b, c),
    );
  }

  async backfill(access: WorkspaceAccess, backfillId: string): Promise<BackfillResponse> {
    const b = await this.repo.findBackfill(access.workspaceId, backfillId);
    if (!b) throw new NotFoundError('online backfill', backfillId);
    return toBackfillResponse(b, await this.repo.counts(b.evaluator_id, b.evaluator_version, b.id));
  }

  /** Cancels a queued or running backfill (members); targets it already scored keep their scores. */
  async cancelBackfill(access: WorkspaceAccess, backfillId: string, caller: Principal): Promise<BackfillResponse> {
    const b = await this.repo.findBackfill(access.workspaceId, backfillId);
    if (!b) throw new NotFoundError('online backfill', backfillId);
    if (b.job_id && (b.state === 'queued' || b.state === 'running')) {
      await this.queue.cancel(b.job_id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'online_backfill.cancelled',
        targetType: 'online_evaluator',
        targetId: b.evaluator_id,
        details: { backfill_id: b.id },
      });
    }
    return this.backfill(access, backfillId);
  }

  private async require(access: WorkspaceAccess, id: string, lock = false): Promise<EvaluatorRow> {
    const evaluator = lock
      ? await this.repo.lockScoped(access.workspaceId, id)
      : await this.repo.find(access.workspaceId, id);
    if (!evaluator) throw new NotFoundError('online evaluator', id);
    return evaluator;
  }

  private async response(e: EvaluatorRow): Promise<OnlineEvaluatorResponse> {
    const spec = (await this.repo.version(e.id, e.version))!.spec as EvaluatorSpec;
    return toEvaluatorResponse(e, spec, await this.repo.counts(e.id, e.version));
  }

  /** That what a version names holds together: its filter, metrics and judge, mapping and route. */
  private async check(access: WorkspaceAccess, datasetId: string, spec: EvaluatorSpec): Promise<void> {
    if (!spec.metrics.length) throw invalid('An evaluator applies at least one metric', 'metrics');
    if (spec.filter) this.traces.spanFilter(spec.filter, '/filter');
    if (spec.judge_id && !(await this.judges.find(access.workspaceId, spec.judge_id)))
      throw invalid(`Workspace ${access.workspaceId} has no judge ${spec.judge_id}`, 'judge_id');
    for (const field of MAPPED_FIELDS) {
      const ref = spec.mapping[field];
      const column = ref?.field.split('.')[0];
      if (column !== undefined && !SPAN_FIELDS.has(column))
        throw invalid(
          `mapping.${field}.field: "${column}" is not a span field (${[...SPAN_FIELDS].join(', ')})`,
          `mapping.${field}.field`,
        );
    }
    await this.planner.metrics(access.workspaceId, spec.metrics, spec.judge_id).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === 'run_input_invalid')
        throw new DomainError(OnlineErrors.online_evaluator_invalid, err.detail, err.extensions);
      throw err;
    });
    const route = spec.route;
    if (!route) return;
    if (route.metric && !spec.metrics.some((m) => m.name === route.metric))
      throw routeInvalid(`route.metric: the evaluator does not score "${route.metric}"`, 'route.metric');
    if (route.review_queue_id) {
      const kind = await this.review.traceQueueKind(access.workspaceId, route.review_queue_id, datasetId);
      const wanted = spec.level === 'session' ? 'sessions' : 'traces';
      if (kind !== wanted)
        throw routeInvalid(
          `route.review_queue_id: ${route.review_queue_id} is not an open ${wanted} review queue over this dataset`,
          'route.review_queue_id',
        );
    }
    if (route.dataset_id) {
      const target = await this.datasets.require(access, route.dataset_id).catch(() => null);
      if (!target || target.kind !== 'rows')
        throw routeInvalid(
          `route.dataset_id: ${route.dataset_id} is not a test-case dataset of the workspace`,
          'route.dataset_id',
        );
    }
  }
}

function invalid(detail: string, field: string): DomainError {
  return new DomainError(OnlineErrors.online_evaluator_invalid, detail, { field });
}

function routeInvalid(detail: string, field: string): DomainError {
  return new DomainError(OnlineErrors.online_route_invalid, detail, { field });
}

function nameTaken(name: string): DomainError {
  return new DomainError(
    OnlineErrors.online_evaluator_name_taken,
    `The workspace already has an online evaluator named ${name}`,
  );
}
