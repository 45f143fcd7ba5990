import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { pageOf, pageWindow, type Page, type PageQueryDto } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { isTerminal } from '#libs/queue/job.types.js';
import type { MetricConfigEntity } from '../../catalogues/entities/metric-config.entity.js';
import { MetricDefaultsService } from '../../catalogues/metrics/metric-defaults.service.js';
import { resolveMetric } from '../../catalogues/metrics/metric-resolution.js';
import type { ReviewJudgeRunResponse, StartReviewJudgeRunRequest } from '../dto/review-judging.dto.js';
import { ReviewQueuesService } from '../review-queues.service.js';
import { ReviewJudgingErrors } from '../review.errors.js';
import { REVIEW_JUDGE_JOB } from '../review.jobs.js';
import { toJudgeRunResponse } from './review-judging.mapper.js';
import { ReviewJudgingRepository } from './review-judging.repository.js';
import { checkField } from './review-judging.rules.js';

const DEFAULT_CONFIDENCE = 0.95;
const DEFAULT_SEED = 1;
/** How long a cancel waits for a running judge run to stop before answering. */
const CANCEL_WAIT_MS = 5000;

/**
 * Judge runs of a review queue: a judged metric config version's judge applied to the queue's
 * finally labelled items on request, as a tracked job (ReviewJudge), which records a judge
 * validation through the catalogues.
 */
@Injectable()
export class ReviewJudgingService {
  constructor(
    private readonly judging: ReviewJudgingRepository,
    private readonly queues: ReviewQueuesService,
    private readonly metricDefaults: MetricDefaultsService,
    private readonly queue: JobQueue,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  /** Checks the config version and the rubric field, then queues the judge run. */
  async start(
    access: WorkspaceAccess,
    queueId: string,
    body: StartReviewJudgeRunRequest,
    caller: Principal,
  ): Promise<ReviewJudgeRunResponse> {
    const queue = await this.queues.require(access, queueId);
    const rubric = await this.queues.rubric(queue);
    const positive = checkField(
      rubric.fields.find((f) => f.name === body.field),
      body.field,
      rubric.version,
      body.positive,
    );
    const config = await this.configInForce(access.workspaceId, body.metric_config.name, body.metric_config.version);
    const run = await this.transactions.run(async () => {
      const run = await this.judging.insert({
        workspace_id: access.workspaceId,
        queue_id: queue.id,
        metric_config_id: config.id,
        config_name: config.name,
        config_version: config.configVersion,
        field: body.field,
        rubric_version: rubric.version,
        positive: positive && JSON.stringify(positive),
        confidence: body.confidence ?? DEFAULT_CONFIDENCE,
        seed: body.seed ?? DEFAULT_SEED,
        created_by: caller.userId,
      });
      await this.queue.enqueue({
        type: REVIEW_JUDGE_JOB,
        payload: { judge_run_id: run.id },
        workspaceId: access.workspaceId,
        targetType: 'review_judge_run',
        targetId: run.id,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'review_judge_run.started',
        targetType: 'review_queue',
        targetId: queue.id,
        details: { judge_run_id: run.id, config: `${config.name} v${config.configVersion}`, field: body.field },
      });
      return (await this.judging.find(access.workspaceId, queue.id, run.id))!;
    });
    return toJudgeRunResponse(run);
  }

  async list(access: WorkspaceAccess, queueId: string, query: PageQueryDto): Promise<Page<ReviewJudgeRunResponse>> {
    const queue = await this.queues.require(access, queueId);
    const [rows, total] = await this.judging.page(access.workspaceId, queue.id, pageWindow(query));
    return pageOf(rows, total, query, toJudgeRunResponse);
  }

  async get(access: WorkspaceAccess, queueId: string, id: string): Promise<ReviewJudgeRunResponse> {
    return toJudgeRunResponse(await this.require(access, queueId, id));
  }

  /** Stops the judge run: a queued one ends cancelled at once, a running one after its calls in flight. */
  async cancel(
    access: WorkspaceAccess,
    queueId: string,
    id: string,
    caller: Principal,
  ): Promise<ReviewJudgeRunResponse> {
    await this.transactions.run(async () => {
      const run = await this.judging.find(access.workspaceId, queueId, id, true);
      if (!run) throw new NotFoundError('judge run', id);
      if (isTerminal(run.state))
        throw new DomainError(
          ReviewJudgingErrors.judge_run_finished,
          `Judge run ${id} has already ended (${run.state})`,
        );
      if (run.job_id) await this.queue.cancel(run.job_id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'review_judge_run.cancelled',
        targetType: 'review_queue',
        targetId: queueId,
        details: { judge_run_id: id, state: run.state },
      });
    });
    const deadline = Date.now() + CANCEL_WAIT_MS;
    let run = await this.require(access, queueId, id);
    while (!isTerminal(run.state) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      run = await this.require(access, queueId, id);
    }
    return toJudgeRunResponse(run);
  }

  /**
   * The judged config version named: the version asked for, or the one in force for the name
   * (as a run naming the metric resolves it: the workspace default's pin, else the newest version).
   */
  private async configInForce(workspaceId: string, name: string, version?: number): Promise<MetricConfigEntity> {
    const inputs = await this.metricDefaults.inputs(workspaceId);
    const config =
      version === undefined
        ? (resolveMetric(name, inputs)?.config ?? null)
        : (inputs.configs.find((c) => c.name.toLowerCase() === name.toLowerCase() && c.configVersion === version) ??
          null);
    if (!config) throw new NotFoundError('metric config', version === undefined ? name : `${name} v${version}`);
    if (config.kind !== 'judged' || !config.judged || !config.judgeId)
      throw new DomainError(
        ReviewJudgingErrors.judge_run_metric_invalid,
        config.kind !== 'judged'
          ? `${config.name} v${config.configVersion} is a ${config.kind} metric; only a judged metric's judge grades the items`
          : `${config.name} v${config.configVersion} names no judge connection; set its judge_id`,
        { name: config.name, version: config.configVersion },
      );
    return config;
  }

  private async require(access: WorkspaceAccess, queueId: string, id: string) {
    const run = await this.judging.find(access.workspaceId, queueId, id);
    if (!run) throw new NotFoundError('judge run', id);
    return run;
  }
}
