import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { BUILTIN_METRICS } from '#libs/evaluation/metric-catalogue.js';
import { OpRegistry } from '../../ops/op-registry.service.js';
import { CatalogueErrors } from '../catalogues.errors.js';
import type {
  MetricConfigResolutionListResponse,
  ResolveMetricConfigsQuery,
  SetMetricDefaultsRequest,
  WorkspaceMetricConfigDefaultListResponse,
  WorkspaceMetricConfigDefaultVersionsResponse,
} from '../dto/metric-defaults.dto.js';
import type { EvalConfigEntity } from '../entities/eval-config.entity.js';
import type { MetricConfigKind } from '../entities/metric-config.entity.js';
import { EvalConfigsRepository } from '../eval-configs/eval-configs.repository.js';
import { WorkspacesService } from '../../workspaces/workspaces.service.js';
import { MetricConfigsRepository } from './metric-configs.repository.js';
import { metricNames, resolveMetric, type Resolution, type ResolutionInputs } from './metric-resolution.js';
import { toMetricDefaultResponse } from '../catalogues.mapper.js';

const BUILTIN_KINDS: ReadonlyMap<string, MetricConfigKind> = new Map(BUILTIN_METRICS.map((m) => [m.name, m.kind]));

/**
 * The workspace's pinned default config per metric (each change a revision) and the resolution
 * of which config version is in force for each metric, and why.
 */
@Injectable()
export class MetricDefaultsService {
  constructor(
    private readonly configs: MetricConfigsRepository,
    private readonly evalConfigs: EvalConfigsRepository,
    private readonly ops: OpRegistry,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
    private readonly workspaces: WorkspacesService,
  ) {}

  async list(access: WorkspaceAccess): Promise<WorkspaceMetricConfigDefaultListResponse> {
    const items = (await this.configs.currentDefaults(access.workspaceId))
      .filter((d) => d.configName !== null)
      .map(toMetricDefaultResponse);
    return { workspace_id: access.workspaceId, items, total: items.length };
  }

  /** Pins (or clears) defaults, one new revision per metric named. */
  async set(
    access: WorkspaceAccess,
    body: SetMetricDefaultsRequest,
    caller: Principal,
  ): Promise<WorkspaceMetricConfigDefaultListResponse> {
    const names = body.defaults.map((d) => d.metric_name.toLowerCase());
    const repeated = names.find((n, i) => names.indexOf(n) !== i);
    if (repeated)
      throw new DomainError(CatalogueErrors.metric_default_invalid, `metric "${repeated}" is named twice`, {
        field: 'defaults',
      });
    return this.transactions.run(async () => {
      await this.workspaces.lock(access.workspaceId);
      const inputs = await this.inputs(access.workspaceId);
      const known = new Set(metricNames(inputs).map((n) => n.toLowerCase()));
      for (const [i, entry] of body.defaults.entries()) {
        const field = `defaults.${i}`;
        if (!known.has(entry.metric_name.toLowerCase()))
          throw new DomainError(
            CatalogueErrors.unknown_metric,
            `${field}.metric_name: "${entry.metric_name}" is not a metric of the workspace (GET /workspaces/${access.workspaceId}/metrics lists them)`,
            { field: `${field}.metric_name` },
          );
        if (entry.config_name !== null) {
          const versions = inputs.configs.filter((c) => c.name.toLowerCase() === entry.config_name!.toLowerCase());
          const version = entry.config_version ?? null;
          const config = version === null ? versions[0] : versions.find((v) => v.configVersion === version);
          if (!config)
            throw new DomainError(
              CatalogueErrors.metric_default_invalid,
              `${field}: the workspace has no metric config ${entry.config_name}${version === null ? '' : ` v${version}`}`,
              { field: `${field}.config_name` },
            );
          const measures = [config.name, config.metric].map((n) => n.toLowerCase());
          if (!measures.includes(entry.metric_name.toLowerCase())) {
            throw new DomainError(
              CatalogueErrors.metric_default_invalid,
              `${field}: ${config.name} computes ${config.metric}, not ${entry.metric_name}`,
              { field: `${field}.config_name` },
            );
          }
        }
        const saved = await this.configs.insertDefault({
          workspaceId: access.workspaceId,
          metricName: entry.metric_name,
          configName:
            entry.config_name === null
              ? null
              : (inputs.configs.find((c) => c.name.toLowerCase() === entry.config_name!.toLowerCase())?.name ??
                entry.config_name),
          configVersion: entry.config_name === null ? null : (entry.config_version ?? null),
          note: entry.note ?? '',
          setBy: caller.userId,
        });
        await this.audit.record({
          actor: caller,
          workspaceId: access.workspaceId,
          action: 'metric_default.set',
          targetType: 'metric_default',
          targetId: saved.id,
          details: {
            metric_name: saved.metricName,
            config_name: saved.configName,
            config_version: saved.configVersion,
            revision: saved.revision,
          },
        });
      }
      return this.list(access);
    });
  }

  async history(access: WorkspaceAccess, metricName: string): Promise<WorkspaceMetricConfigDefaultVersionsResponse> {
    const revisions = await this.configs.defaultHistory(access.workspaceId, metricName);
    if (!revisions.length) {
      const known = metricNames(await this.inputs(access.workspaceId)).some(
        (n) => n.toLowerCase() === metricName.toLowerCase(),
      );
      if (!known) throw new NotFoundError('metric', metricName);
    }
    return {
      workspace_id: access.workspaceId,
      metric_name: revisions[0]?.metricName ?? metricName,
      items: revisions.map(toMetricDefaultResponse),
      total: revisions.length,
    };
  }

  async resolved(
    access: WorkspaceAccess,
    query: ResolveMetricConfigsQuery,
  ): Promise<MetricConfigResolutionListResponse> {
    const evalConfig = query.eval_config_id
      ? await this.evalConfigs.find(access.workspaceId, query.eval_config_id)
      : null;
    if (query.eval_config_id && !evalConfig) throw new NotFoundError('eval config', query.eval_config_id);
    const inputs = await this.inputs(access.workspaceId, evalConfig);
    const names = query.metric ? [query.metric] : metricNames(inputs);
    const items = names.map((n) => resolveMetric(n, inputs)).filter((r): r is Resolution => r !== null);
    if (query.metric && !items.length) throw new NotFoundError('metric', query.metric);
    return {
      workspace_id: access.workspaceId,
      eval_config_id: evalConfig?.id ?? null,
      items: items.map((r) => ({
        metric_name: r.metric_name,
        source: r.source,
        reason: r.reason,
        config_name: r.config?.name ?? null,
        config_version: r.config?.configVersion ?? null,
        kind: r.kind,
        metric: r.metric,
        params: r.config?.params ?? {},
        threshold: r.config?.threshold ?? null,
      })),
    };
  }

  /** What resolution reads for a workspace (and an eval config). */
  async inputs(workspaceId: string, evalConfig?: EvalConfigEntity | null): Promise<ResolutionInputs> {
    const [configs, defaults, ops] = await Promise.all([
      this.configs.all(workspaceId),
      this.configs.currentDefaults(workspaceId),
      this.ops.views(workspaceId),
    ]);
    return {
      configs,
      defaults,
      builtins: BUILTIN_KINDS,
      customMetrics: ops.filter((o) => o.kind === 'metric' && o.source === 'workspace').map((o) => o.name),
      ...(evalConfig ? { evalRefs: evalConfig.metrics, evalName: evalConfig.name } : {}),
    };
  }
}
