import { Injectable } from '@nestjs/common';
import { DETERMINISTIC_METRICS } from '#libs/evaluation/deterministic-metrics.js';
import { BUILTIN_METRICS, type DatasetField } from '#libs/evaluation/metric-catalogue.js';
import { judgedMetricDefault } from '#libs/evaluation/judged-metrics.js';
import { OpRegistry } from '../../ops/op-registry.service.js';
import type { CatalogueMetric, WorkspaceMetricCatalogue } from '../dto/metric-catalogue.dto.js';
import { MetricConfigsRepository } from './metric-configs.repository.js';

const deterministic = new Map(DETERMINISTIC_METRICS.map((m) => [m.name, m]));
const builtinRequires = new Map(BUILTIN_METRICS.map((m) => [m.name, m.requires]));

/** The metrics a workspace can score with: the built-ins, its metric configs (newest version each), and its custom metric ops. */
@Injectable()
export class MetricCatalogueService {
  constructor(
    private readonly configs: MetricConfigsRepository,
    private readonly ops: OpRegistry,
  ) {}

  async catalogue(workspaceId: string): Promise<WorkspaceMetricCatalogue> {
    const [configs, ops] = await Promise.all([this.configs.all(workspaceId), this.ops.views(workspaceId)]);
    const builtins: CatalogueMetric[] = BUILTIN_METRICS.map((m) => {
      const impl = deterministic.get(m.name);
      return {
        name: m.name,
        kind: m.kind,
        description: m.description,
        source: 'builtin',
        requires: m.requires,
        better: impl?.better ?? null,
        params_schema: impl?.paramsSchema ?? null,
        latest_version: null,
        available: true,
      };
    });
    const seen = new Set<string>();
    const workspace: CatalogueMetric[] = configs
      .filter((c) => !seen.has(c.name.toLowerCase()) && seen.add(c.name.toLowerCase()))
      .map((c) => ({
        name: c.name,
        kind: c.kind,
        description: c.description || `${c.kind} metric ${c.metric}`,
        source: 'metric_config',
        requires: requiresOf(c.kind, c.metric, c.judged?.rubric),
        better: deterministic.get(c.metric)?.better ?? (c.kind === 'judged' ? null : 'higher'),
        params_schema: null,
        latest_version: c.configVersion,
        available: true,
      }));
    const custom: CatalogueMetric[] = ops
      .filter((o) => o.kind === 'metric' && o.source === 'workspace')
      .map((o) => ({
        name: o.name,
        kind: 'custom',
        description: o.description,
        source: 'custom_op',
        requires: [],
        better: 'higher',
        params_schema: o.params_schema,
        latest_version: o.version,
        available: o.available,
      }));
    return { workspace_id: workspaceId, metrics: [...builtins, ...workspace, ...custom] };
  }
}

/** The dataset fields a config reads: a built-in's, or for a rubric the placeholders it uses. */
function requiresOf(kind: string, metric: string, rubric: string | undefined): DatasetField[] {
  if (kind === 'judged') {
    const text = rubric ?? judgedMetricDefault(metric)?.rubric ?? '';
    return (['input', 'expected_output', 'context'] as const).filter((field) =>
      new RegExp(`\\{\\{\\s*${field}\\b`).test(text),
    );
  }
  return builtinRequires.get(metric) ?? [];
}
