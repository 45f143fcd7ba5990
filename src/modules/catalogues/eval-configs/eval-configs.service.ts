import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { CatalogueErrors } from '../catalogues.errors.js';
import type {
  CreateEvalConfigRequest,
  EvalConfigResponse,
  ListEvalConfigsQuery,
  ReplaceEvalConfigRequest,
} from '../dto/eval-config.dto.js';
import type { EvalConfigEntity, EvalMetricRef, PassRule } from '../entities/eval-config.entity.js';
import { EvalConfigsRepository } from './eval-configs.repository.js';
import { MetricConfigsRepository } from '../metrics/metric-configs.repository.js';
import { MetricDefaultsService } from '../metrics/metric-defaults.service.js';
import { resolveMetric } from '../metrics/metric-resolution.js';
import { toEvalConfigResponse, evalConfigEtag } from '../catalogues.mapper.js';

const DEFAULT_PASS_RULE: PassRule = { row: 'all', min_pass_rate: 1, errors_fail: true };

/** Eval configs: the metrics (by config name and version), default judge and pass rule a run is judged by. */
@Injectable()
export class EvalConfigsService {
  constructor(
    private readonly evalConfigs: EvalConfigsRepository,
    private readonly metricConfigs: MetricConfigsRepository,
    private readonly defaults: MetricDefaultsService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  /** The workspace's eval config, or null: for runs, whose planner snapshots it. */
  find(workspaceId: string, id: string): Promise<EvalConfigEntity | null> {
    return this.evalConfigs.find(workspaceId, id);
  }

  async list(access: WorkspaceAccess, query: ListEvalConfigsQuery): Promise<Page<EvalConfigResponse>> {
    const [rows, total] = await this.evalConfigs.page(access.workspaceId, query.q, pageWindow(query));
    return pageOf(rows, total, query, toEvalConfigResponse);
  }

  async get(access: WorkspaceAccess, id: string): Promise<EvalConfigResponse> {
    const config = await this.evalConfigs.find(access.workspaceId, id);
    if (!config) throw new NotFoundError('eval config', id);
    return toEvalConfigResponse(config);
  }

  async create(access: WorkspaceAccess, body: CreateEvalConfigRequest, caller: Principal): Promise<EvalConfigResponse> {
    return this.transactions.run(async () => {
      if (await this.evalConfigs.nameTaken(access.workspaceId, body.name, null)) throw nameTaken(body.name);
      const fields = await this.checked(access.workspaceId, body);
      const config = await this.evalConfigs.save({
        workspaceId: access.workspaceId,
        name: body.name,
        description: body.description ?? '',
        ...fields,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'eval_config.created',
        targetType: 'eval_config',
        targetId: config.id,
        details: { name: config.name, metrics: config.metrics.map((m) => m.config_name) },
      });
      return toEvalConfigResponse(config);
    });
  }

  /** Replaces the whole config; honours If-Match. Runs keep the snapshot they started with. */
  async replace(
    access: WorkspaceAccess,
    id: string,
    body: ReplaceEvalConfigRequest,
    ifMatch: IfMatchPrecondition,
    caller: Principal,
  ): Promise<EvalConfigResponse> {
    return this.transactions.run(async () => {
      const config = await this.evalConfigs.findForUpdate(access.workspaceId, id);
      if (!config) throw new NotFoundError('eval config', id);
      ifMatch.check(evalConfigEtag(toEvalConfigResponse(config)));
      if (
        body.name.toLowerCase() !== config.name.toLowerCase() &&
        (await this.evalConfigs.nameTaken(access.workspaceId, body.name, id))
      )
        throw nameTaken(body.name);
      Object.assign(config, {
        name: body.name,
        description: body.description ?? '',
        ...(await this.checked(access.workspaceId, body)),
      });
      const saved = await this.evalConfigs.save(config);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'eval_config.replaced',
        targetType: 'eval_config',
        targetId: id,
        details: { name: saved.name, metrics: saved.metrics.map((m) => m.config_name) },
      });
      return toEvalConfigResponse(saved);
    });
  }

  async delete(access: WorkspaceAccess, id: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      const config = await this.evalConfigs.findForUpdate(access.workspaceId, id);
      if (!config) throw new NotFoundError('eval config', id);
      await this.evalConfigs.delete(id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'eval_config.deleted',
        targetType: 'eval_config',
        targetId: id,
        details: { name: config.name },
      });
    });
  }

  /** Every metric resolves to a config (or a built-in), pinned versions exist, and every judged metric has a judge. */
  private async checked(
    workspaceId: string,
    body: CreateEvalConfigRequest | ReplaceEvalConfigRequest,
  ): Promise<Pick<EvalConfigEntity, 'metrics' | 'defaultJudgeId' | 'passRule'>> {
    const defaultJudgeId = body.default_judge_id ?? null;
    if (defaultJudgeId && !(await this.metricConfigs.judgeInWorkspace(workspaceId, defaultJudgeId))) {
      throw new DomainError(CatalogueErrors.unknown_judge, `Workspace ${workspaceId} has no judge ${defaultJudgeId}`, {
        field: 'default_judge_id',
      });
    }
    const metrics: EvalMetricRef[] = body.metrics.map((m) => ({
      config_name: m.config_name,
      config_version: m.config_version ?? null,
      threshold: m.threshold ?? null,
      min_pass_rate: m.min_pass_rate ?? null,
      gating: m.gating ?? true,
    }));
    const inputs = await this.defaults.inputs(workspaceId);
    const seen = new Set<string>();
    for (const [i, ref] of metrics.entries()) {
      const field = `metrics.${i}`;
      if (seen.has(ref.config_name.toLowerCase()))
        throw new DomainError(CatalogueErrors.eval_config_invalid, `${field}: ${ref.config_name} is named twice`, {
          field,
        });
      seen.add(ref.config_name.toLowerCase());
      const versions = inputs.configs.filter((c) => c.name.toLowerCase() === ref.config_name.toLowerCase());
      if (ref.config_version !== null && !versions.some((v) => v.configVersion === ref.config_version)) {
        throw new DomainError(
          CatalogueErrors.eval_config_invalid,
          `${field}: the workspace has no metric config ${ref.config_name} v${ref.config_version}`,
          { field: `${field}.config_version` },
        );
      }
      const resolution = resolveMetric(ref.config_name, { ...inputs, evalRefs: metrics });
      if (!resolution)
        throw new DomainError(
          CatalogueErrors.eval_config_invalid,
          `${field}: "${ref.config_name}" is neither a metric config of the workspace nor a built-in metric`,
          { field: `${field}.config_name` },
        );
      if (resolution.kind === 'judged' && !resolution.config?.judgeId && !defaultJudgeId) {
        throw new DomainError(
          CatalogueErrors.judge_required,
          `${field}: ${ref.config_name} is judged and names no judge; set default_judge_id`,
          { field: 'default_judge_id' },
        );
      }
    }
    return {
      metrics,
      defaultJudgeId,
      passRule: {
        ...DEFAULT_PASS_RULE,
        ...Object.fromEntries(Object.entries(body.pass_rule ?? {}).filter(([, v]) => v !== undefined)),
      },
    };
  }
}

function nameTaken(name: string): DomainError {
  return new DomainError(
    CatalogueErrors.eval_config_name_taken,
    `The workspace already has an eval config named "${name}"`,
  );
}
