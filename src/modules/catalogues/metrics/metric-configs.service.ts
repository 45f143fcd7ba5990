import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { type Page, pageWindow } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import {
  DETERMINISTIC_METRICS,
  deterministicMetric,
  MetricParamsError,
  validateMetricParams,
} from '#libs/evaluation/deterministic-metrics.js';
import { GENERIC_JUDGED_METRIC, JUDGED_METRIC_DEFAULTS, judgedMetricDefault } from '#libs/evaluation/judged-metrics.js';
import { checkRubric } from '#libs/evaluation/judges/rubric.js';
import { CustomOpsService } from '../../ops/custom-ops.service.js';
import { OpRegistry } from '../../ops/op-registry.service.js';
import { CatalogueErrors } from '../catalogues.errors.js';
import type {
  CreateMetricConfigRequest,
  CreateMetricConfigVersionRequest,
  ListMetricConfigsQuery,
  MetricConfigDefinition,
  MetricConfigResponse,
  MetricConfigSummary,
  UpdateMetricConfigRequest,
} from '../dto/metric-config.dto.js';
import type { JudgedSpec, MetricConfigEntity, MetricConfigKind } from '../entities/metric-config.entity.js';
import { scaleOf } from '../judges/judges.service.js';
import { WorkspacesService } from '../../workspaces/workspaces.service.js';
import { MetricConfigsRepository } from './metric-configs.repository.js';
import { toMetricConfigResponse } from '../catalogues.mapper.js';

const FIVE_POINT = { type: 'numeric' as const, min: 1, max: 5 };

type Definition = Pick<MetricConfigEntity, 'description' | 'metric' | 'params' | 'threshold' | 'judged' | 'judgeId'>;

/**
 * Named, versioned metric configurations. A version can be edited until a run uses it; then it
 * is frozen and changes go into a new version (POST /workspaces/{id}/metric-configs/{name}/versions).
 */
@Injectable()
export class MetricConfigsService {
  constructor(
    private readonly configs: MetricConfigsRepository,
    private readonly ops: OpRegistry,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
    private readonly workspaces: WorkspacesService,
    private readonly customOps: CustomOpsService,
  ) {}

  /** Deletes a stopped custom op of the workspace (DELETE …/custom_ops/{name}), refused while metric configs score with its ops. */
  deleteCustomOp(access: WorkspaceAccess, name: string, caller: Principal): Promise<void> {
    return this.transactions.run(async () => {
      const served = await this.customOps.servedOps(access, name);
      const users = served.length ? await this.configs.usingOps(access.workspaceId, served) : [];
      await this.customOps.delete(access, name, caller, users);
    });
  }

  async list(access: WorkspaceAccess, query: ListMetricConfigsQuery): Promise<Page<MetricConfigSummary>> {
    const [rows, total] = await this.configs.summaries(access.workspaceId, query, pageWindow(query));
    return { items: rows, total, page: query.page, page_size: query.page_size };
  }

  async get(access: WorkspaceAccess, name: string, version: string): Promise<MetricConfigResponse> {
    const config = await this.configs.find(access.workspaceId, name, parseVersion(version));
    if (!config) throw notFound(name, version);
    const latest = await this.configs.find(access.workspaceId, name, 'latest');
    return toMetricConfigResponse(config, latest?.configVersion === config.configVersion);
  }

  /** Version 1 of a new name. */
  async create(
    access: WorkspaceAccess,
    body: CreateMetricConfigRequest,
    caller: Principal,
  ): Promise<MetricConfigResponse> {
    return this.transactions.run(async () => {
      if ((await this.configs.lockName(access.workspaceId, body.name)).length) {
        throw new DomainError(
          CatalogueErrors.metric_config_name_taken,
          `The workspace already has metric config "${body.name}"; add a version with POST /workspaces/${access.workspaceId}/metric-configs/${body.name}/versions`,
        );
      }
      const definition = await this.define(access.workspaceId, body.kind, body.metric, body, undefined);
      const config = await this.configs.save({
        workspaceId: access.workspaceId,
        name: body.name,
        configVersion: 1,
        kind: body.kind,
        ...definition,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'metric_config.created',
        targetType: 'metric_config',
        targetId: config.id,
        details: { name: config.name, version: 1, kind: config.kind, metric: config.metric },
      });
      return toMetricConfigResponse(config, true);
    });
  }

  /** The next version of a name, starting from `from_version` (default the newest): what the body leaves out is copied. */
  async createVersion(
    access: WorkspaceAccess,
    name: string,
    body: CreateMetricConfigVersionRequest,
    caller: Principal,
  ): Promise<MetricConfigResponse> {
    return this.transactions.run(async () => {
      const versions = await this.configs.lockName(access.workspaceId, name);
      if (!versions.length) throw notFound(name);
      const base =
        body.from_version === undefined
          ? versions[versions.length - 1]
          : versions.find((v) => v.configVersion === body.from_version);
      if (!base) throw notFound(name, String(body.from_version));
      const definition = await this.define(access.workspaceId, base.kind, base.metric, body, base);
      const next = versions[versions.length - 1].configVersion + 1;
      const config = await this.configs.save({
        workspaceId: access.workspaceId,
        name: base.name,
        configVersion: next,
        kind: base.kind,
        ...definition,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'metric_config.version_created',
        targetType: 'metric_config',
        targetId: config.id,
        details: { name: config.name, version: next, from_version: base.configVersion },
      });
      return toMetricConfigResponse(config, true);
    });
  }

  /** Replaces a version's definition (what the body leaves out stays); refused once a run used it. */
  async update(
    access: WorkspaceAccess,
    name: string,
    version: string,
    body: UpdateMetricConfigRequest,
    caller: Principal,
  ): Promise<MetricConfigResponse> {
    return this.transactions.run(async () => {
      const versions = await this.configs.lockName(access.workspaceId, name);
      const wanted = parseVersion(version);
      const config =
        wanted === 'latest' ? versions[versions.length - 1] : versions.find((v) => v.configVersion === wanted);
      if (!config) throw notFound(name, version);
      assertNotFrozen(config);
      Object.assign(config, await this.define(access.workspaceId, config.kind, config.metric, body, config));
      const saved = await this.configs.save(config);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'metric_config.updated',
        targetType: 'metric_config',
        targetId: config.id,
        details: { name: config.name, version: config.configVersion, fields: Object.keys(body) },
      });
      return toMetricConfigResponse(saved, versions[versions.length - 1].configVersion === saved.configVersion);
    });
  }

  /** Refused once a run used the version, or while a workspace default or an eval config pins it. */
  async delete(access: WorkspaceAccess, name: string, version: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      await this.workspaces.lock(access.workspaceId);
      const wanted = parseVersion(version);
      const versions = await this.configs.lockName(access.workspaceId, name);
      const config =
        wanted === 'latest' ? versions[versions.length - 1] : versions.find((v) => v.configVersion === wanted);
      if (!config) throw notFound(name, version);
      assertNotFrozen(config);
      const pins = [
        ...(await this.configs.currentDefaults(access.workspaceId))
          .filter(
            (d) =>
              d.configName?.toLowerCase() === config.name.toLowerCase() &&
              (d.configVersion === config.configVersion || (d.configVersion === null && versions.length === 1)),
          )
          .map((d) => `the workspace default for ${d.metricName}`),
        ...(await this.configs.evalConfigsPinning(access.workspaceId, config.name, config.configVersion)).map(
          (e) => `eval config ${e}`,
        ),
      ];
      if (pins.length)
        throw new DomainError(
          CatalogueErrors.metric_config_in_use,
          `${config.name} v${config.configVersion} is pinned by ${pins.join(', ')}`,
          { used_by: pins },
        );
      await this.configs.delete(config.id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'metric_config.deleted',
        targetType: 'metric_config',
        targetId: config.id,
        details: { name: config.name, version: config.configVersion },
      });
    });
  }

  /** Runs call this when they start: the versions they use are frozen from then on. */
  async markUsed(configIds: string[], runId: string): Promise<void> {
    await this.configs.markUsed(configIds, runId);
  }

  /** Checks a definition against its kind and metric, filling what the body leaves out from `base` (or the metric's defaults). */
  private async define(
    workspaceId: string,
    kind: MetricConfigKind,
    metric: string,
    body: MetricConfigDefinition,
    base: MetricConfigEntity | undefined,
  ): Promise<Definition> {
    const description = body.description ?? base?.description ?? '';
    const params = body.params ?? base?.params ?? {};
    const threshold = body.threshold !== undefined ? body.threshold : (base?.threshold ?? null);
    if (kind === 'judged') {
      if (body.params !== undefined && Object.keys(body.params).length)
        throw paramsInvalid(metric, [
          {
            field: 'params',
            message: 'judged metrics take no params: set judged.rubric, judged.scale and judged.pass_threshold',
          },
        ]);
      if (body.threshold !== undefined && body.threshold !== null)
        throw paramsInvalid(metric, [
          {
            field: 'threshold',
            message: 'judged metrics pass by judged.pass_threshold (numeric scales) or judged.pass_labels',
          },
        ]);
      const judged = this.judgedSpec(metric, body.judged, base?.judged ?? null);
      const judgeId = body.judged?.judge_id !== undefined ? body.judged.judge_id : (base?.judgeId ?? null);
      if (judgeId && !(await this.configs.judgeInWorkspace(workspaceId, judgeId)))
        throw new DomainError(CatalogueErrors.unknown_judge, `Workspace ${workspaceId} has no judge ${judgeId}`, {
          field: 'judged.judge_id',
        });
      return { description, metric: judged.metric, params: {}, threshold: null, judged: judged.spec, judgeId };
    }
    if (body.judged !== undefined)
      throw paramsInvalid(metric, [
        { field: 'judged', message: `only judged metrics take judged settings; this is a ${kind} metric` },
      ]);
    if ('threshold' in params)
      throw paramsInvalid(metric, [
        { field: 'params.threshold', message: 'set the threshold at the top level (threshold), not in params' },
      ]);
    if (kind === 'deterministic') {
      const known = deterministicMetric(metric);
      if (!known)
        throw new DomainError(
          CatalogueErrors.unknown_metric,
          `"${metric}" is not a deterministic metric; they are ${DETERMINISTIC_METRICS.map((m) => m.name).join(', ')}`,
          { available: DETERMINISTIC_METRICS.map((m) => m.name) },
        );
      try {
        validateMetricParams(known.name, threshold === null ? params : { ...params, threshold });
      } catch (err) {
        if (err instanceof MetricParamsError) throw paramsInvalid(metric, err.errors);
        throw err;
      }
      return { description, metric: known.name, params, threshold, judged: null, judgeId: null };
    }
    const op = await this.ops.lookup(workspaceId, metric);
    if (!op || op.kind !== 'metric' || op.source === 'builtin') {
      throw new DomainError(
        CatalogueErrors.unknown_metric,
        `The workspace registers no custom metric op "${metric}" (GET /ops/registry lists them)`,
      );
    }
    const errors = this.ops.validateParams(op, params);
    if (errors.length) throw paramsInvalid(metric, errors);
    return { description, metric: op.name, params, threshold, judged: null, judgeId: null };
  }

  private judgedSpec(
    metric: string,
    body: MetricConfigDefinition['judged'],
    base: JudgedSpec | null,
  ): { metric: string; spec: JudgedSpec } {
    const builtin = judgedMetricDefault(metric);
    if (!builtin && metric !== GENERIC_JUDGED_METRIC) {
      const names = [GENERIC_JUDGED_METRIC, ...JUDGED_METRIC_DEFAULTS.map((m) => m.name)];
      throw new DomainError(
        CatalogueErrors.unknown_metric,
        `"${metric}" is not a judged metric; they are ${names.join(', ')}`,
        { available: names },
      );
    }
    const rubric = body?.rubric ?? base?.rubric ?? builtin?.rubric;
    if (!rubric)
      throw new DomainError(
        CatalogueErrors.rubric_invalid,
        `${GENERIC_JUDGED_METRIC} needs judged.rubric: the prompt the judge grades with`,
        { errors: ['judged.rubric is required'] },
      );
    const rubricErrors = checkRubric(rubric);
    if (rubricErrors.length)
      throw new DomainError(CatalogueErrors.rubric_invalid, rubricErrors.join('; '), { errors: rubricErrors });
    const scale = body?.scale ? scaleOf(body.scale) : (base?.scale ?? builtin?.scale ?? FIVE_POINT);
    if (scale.type === 'numeric') {
      if (body?.pass_labels)
        throw new DomainError(
          CatalogueErrors.scale_invalid,
          'judged.pass_labels is for label scales; numeric scales pass by judged.pass_threshold',
        );
      const passThreshold = body?.pass_threshold ?? base?.pass_threshold ?? builtin?.pass_threshold ?? 0.75;
      return {
        metric: builtin?.name ?? GENERIC_JUDGED_METRIC,
        spec: { rubric, scale, pass_threshold: passThreshold, pass_labels: null },
      };
    }
    if (body?.pass_threshold !== undefined)
      throw new DomainError(
        CatalogueErrors.scale_invalid,
        'judged.pass_threshold is for numeric scales; label scales pass by judged.pass_labels',
      );
    const passLabels = body?.pass_labels ??
      (base?.scale.type === 'labels' ? base.pass_labels : null) ?? [scale.labels[0]];
    const unknown = passLabels.filter((l) => !scale.labels.includes(l));
    if (unknown.length)
      throw new DomainError(
        CatalogueErrors.scale_invalid,
        `judged.pass_labels names labels not on the scale: ${unknown.join(', ')}`,
      );
    return {
      metric: builtin?.name ?? GENERIC_JUDGED_METRIC,
      spec: { rubric, scale, pass_threshold: null, pass_labels: passLabels },
    };
  }
}

/** `3` or `latest`. */
export function parseVersion(version: string): number | 'latest' {
  if (version === 'latest') return 'latest';
  if (!/^[1-9]\d{0,8}$/.test(version))
    throw new DomainError(
      CatalogueErrors.invalid_config_version,
      `config_version must be a positive integer or "latest", not "${version.slice(0, 50)}"`,
    );
  return Number(version);
}

export function notFound(name: string, version?: string): DomainError {
  return new NotFoundError('metric config', version ? `${name} v${version}` : name);
}

function assertNotFrozen(config: MetricConfigEntity): void {
  if (config.firstUsedAt) {
    throw new DomainError(
      CatalogueErrors.metric_config_frozen,
      `${config.name} v${config.configVersion} was used by run ${config.firstUsedByRun} and can no longer change; create a new version instead`,
      { first_used_by_run: config.firstUsedByRun },
    );
  }
}

function paramsInvalid(metric: string, errors: Array<{ field: string; message: string }>): DomainError {
  return new DomainError(
    CatalogueErrors.metric_params_invalid,
    `Invalid parameters for ${metric}: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`,
    { errors },
  );
}
