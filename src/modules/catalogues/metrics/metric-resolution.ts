import type { ResolutionSource } from '../dto/metric-defaults.dto.js';
import type { EvalMetricRef } from '../entities/eval-config.entity.js';
import type { MetricConfigDefaultEntity } from '../entities/metric-config-default.entity.js';
import type { MetricConfigEntity, MetricConfigKind } from '../entities/metric-config.entity.js';

export interface Resolution {
  metric_name: string;
  source: ResolutionSource;
  reason: string;
  /** null for built-in defaults. */
  config: MetricConfigEntity | null;
  kind: MetricConfigKind;
  metric: string;
}

export interface ResolutionInputs {
  /** Every version of every metric config of the workspace. */
  configs: MetricConfigEntity[];
  /** The newest default revision per metric. */
  defaults: MetricConfigDefaultEntity[];
  /** The eval config's metrics, when resolving for one. */
  evalRefs?: EvalMetricRef[];
  evalName?: string;
  /** Built-in metrics and their kind. */
  builtins: ReadonlyMap<string, MetricConfigKind>;
  /** The workspace's registered metric ops. */
  customMetrics: readonly string[];
}

const key = (name: string) => name.toLowerCase();

/**
 * Which configuration a metric name stands for, and why. First match wins: a version pinned by
 * the eval config; the workspace's pinned default; the newest version of a config of that name;
 * the built-in metric (or custom op) with its own defaults.
 */
export function resolveMetric(name: string, inputs: ResolutionInputs): Resolution | null {
  const versions = inputs.configs
    .filter((c) => key(c.name) === key(name))
    .sort((a, b) => b.configVersion - a.configVersion);
  const ref = inputs.evalRefs?.find((r) => key(r.config_name) === key(name));
  const evalLabel = inputs.evalName ? `eval config ${inputs.evalName}` : 'the eval config';
  const viaEval = ref ? `${evalLabel} names ${name} without a version; ` : '';
  if (ref && ref.config_version !== null) {
    const pinned = versions.find((v) => v.configVersion === ref.config_version);
    if (pinned) return found(name, 'eval_config', `${evalLabel} pins ${pinned.name} v${pinned.configVersion}`, pinned);
  }
  const pin = inputs.defaults.find((d) => key(d.metricName) === key(name) && d.configName !== null);
  if (pin) {
    const pinnedVersions = inputs.configs
      .filter((c) => key(c.name) === key(pin.configName!))
      .sort((a, b) => b.configVersion - a.configVersion);
    const config =
      pin.configVersion === null
        ? pinnedVersions[0]
        : pinnedVersions.find((v) => v.configVersion === pin.configVersion);
    if (config) {
      const how =
        pin.configVersion === null
          ? `follows the newest version of ${config.name}, now v${config.configVersion}`
          : `pins ${config.name} v${config.configVersion}`;
      return found(
        name,
        'workspace_default',
        `${viaEval}the workspace default for ${name} (revision ${pin.revision}) ${how}`,
        config,
      );
    }
  }
  if (versions.length)
    return found(
      name,
      'latest_version',
      `${viaEval}no default is pinned for ${name}; its newest version is v${versions[0].configVersion}`,
      versions[0],
    );
  const builtin = inputs.builtins.get(key(name));
  if (builtin)
    return {
      metric_name: name,
      source: 'builtin',
      reason: `${viaEval}${name} is a built-in metric with no workspace config: it is scored with its default parameters`,
      config: null,
      kind: builtin,
      metric: key(name),
    };
  const custom = inputs.customMetrics.find((m) => key(m) === key(name));
  if (custom)
    return {
      metric_name: name,
      source: 'op_defaults',
      reason: `${viaEval}${custom} is a registered custom metric with no config: it is called with empty parameters`,
      config: null,
      kind: 'custom',
      metric: custom,
    };
  return null;
}

/** Every metric name the workspace knows: built-ins, config names, custom metrics, and the eval config's. */
export function metricNames(inputs: ResolutionInputs): string[] {
  const names = new Map<string, string>();
  for (const name of [
    ...inputs.builtins.keys(),
    ...inputs.configs.map((c) => c.name),
    ...inputs.customMetrics,
    ...(inputs.evalRefs ?? []).map((r) => r.config_name),
  ]) {
    if (!names.has(key(name))) names.set(key(name), name);
  }
  return [...names.values()].sort((a, b) => a.localeCompare(b));
}

function found(name: string, source: ResolutionSource, reason: string, config: MetricConfigEntity): Resolution {
  return { metric_name: name, source, reason, config, kind: config.kind, metric: config.metric };
}
