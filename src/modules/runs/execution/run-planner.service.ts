import { Injectable } from '@nestjs/common';
import { DomainError } from '#libs/common/domain-error.js';
import {
  deterministicMetric,
  MetricParamsError,
  validateMetricParams,
} from '#libs/evaluation/deterministic-metrics.js';
import { judgedMetricDefault } from '#libs/evaluation/judged-metrics.js';
import type { PassRule } from '#libs/evaluation/runs/run.types.js';
import { defaultAdapter } from '#libs/evaluation/sut/adapter.js';
import type { EvalConfigEntity, EvalMetricRef } from '../../catalogues/entities/eval-config.entity.js';
import type { JudgedSpec } from '../../catalogues/entities/metric-config.entity.js';
import { EvalConfigsService } from '../../catalogues/eval-configs/eval-configs.service.js';
import { judgeConnection, JudgesService } from '../../catalogues/judges/judges.service.js';
import { MetricDefaultsService } from '../../catalogues/metrics/metric-defaults.service.js';
import { type Resolution, resolveMetric } from '../../catalogues/metrics/metric-resolution.js';
import type { RunSource } from '../../datasets/run-source.service.js';
import { OpRegistry } from '../../ops/op-registry.service.js';
import { connectionSpec } from '../../suts/connections.service.js';
import { SutsService } from '../../suts/suts.service.js';
import type { RunMetric, RunSnapshot } from './run-snapshot.js';
import { CatalogueErrors } from '../../catalogues/catalogues.errors.js';
import { RunErrors } from '../runs.errors.js';

/** Metrics that score 0 or 1: without a threshold a row passes them at 1, so they gate rows like the others. */
const PASS_AT_ONE = new Set(['exact_match', 'contains', 'regex', 'json_valid', 'json_schema']);
const DEFAULT_PASS_RULE: PassRule = { row: 'all', min_pass_rate: 1, errors_fail: true };
const FIVE_POINT = { type: 'numeric' as const, min: 1, max: 5 };

export interface RunInputs {
  sutId: string;
  connectionId: string;
  evalConfigId?: string;
  /** Metric names, resolved as an eval config naming them without versions would. */
  metrics?: string[];
  /** The judge for judged metrics that name none (over the eval config's default). */
  judgeId?: string;
}

/**
 * Turns what a run request names into the snapshot the run executes: the connection and its
 * adapter revision, every metric resolved to a config version (or built-in defaults) with its
 * judge or custom op, and the pass rule.
 */
@Injectable()
export class RunPlanner {
  constructor(
    private readonly suts: SutsService,
    private readonly evalConfigs: EvalConfigsService,
    private readonly judges: JudgesService,
    private readonly defaults: MetricDefaultsService,
    private readonly ops: OpRegistry,
  ) {}

  async snapshot(workspaceId: string, source: RunSource, inputs: RunInputs): Promise<RunSnapshot> {
    const { sut, connection, adapter } = await this.suts.callable(workspaceId, inputs.sutId, inputs.connectionId);
    if (!sut) throw invalid(`Workspace ${workspaceId} has no SUT ${inputs.sutId}`, 'sut_id');
    if (!connection) throw invalid(`SUT ${sut.name} has no connection ${inputs.connectionId}`, 'connection_id');

    let evalConfig: EvalConfigEntity | null = null;
    if (inputs.evalConfigId) {
      evalConfig = await this.evalConfigs.find(workspaceId, inputs.evalConfigId);
      if (!evalConfig)
        throw invalid(`Workspace ${workspaceId} has no eval config ${inputs.evalConfigId}`, 'eval_config_id');
    }
    const refs: EvalMetricRef[] =
      evalConfig?.metrics ??
      (inputs.metrics ?? []).map((name) => ({
        config_name: name,
        config_version: null,
        threshold: null,
        min_pass_rate: null,
        gating: true,
      }));
    if (!refs.length)
      throw new DomainError(
        RunErrors.metrics_required,
        'Name an eval_config_id or at least one metric to score the run with',
      );
    const judgeId = inputs.judgeId ?? evalConfig?.defaultJudgeId ?? null;
    const metrics = await this.metricsOf(workspaceId, refs, evalConfig, judgeId);
    return {
      dataset: {
        id: source.datasetId,
        name: source.datasetName,
        version_id: source.versionId,
        version_number: source.versionNumber,
        partition_id: source.partitionId,
      },
      mapping: source.mapping,
      sut: { id: sut.id, name: sut.name },
      connection: { id: connection.id, name: connection.name, spec: connectionSpec(connection) },
      adapter: { revision: adapter?.revision ?? 0, spec: adapter?.spec ?? defaultAdapter(connection.kind) },
      eval_config: evalConfig ? { id: evalConfig.id, name: evalConfig.name } : null,
      metrics,
      pass_rule: evalConfig?.passRule ?? DEFAULT_PASS_RULE,
    };
  }

  /**
   * Metrics named without an eval config (names of metric configs or built-ins, each with an
   * optional threshold) resolved as a run resolves them, with their judge or custom op: what an
   * online evaluator scores with. Errors are 400 `run_input_invalid` naming `metrics.<i>`.
   */
  async metrics(
    workspaceId: string,
    named: Array<{ name: string; threshold?: number | null }>,
    judgeId: string | null,
  ): Promise<RunMetric[]> {
    const refs: EvalMetricRef[] = named.map((m) => ({
      config_name: m.name,
      config_version: null,
      threshold: m.threshold ?? null,
      min_pass_rate: null,
      gating: true,
    }));
    return this.metricsOf(workspaceId, refs, null, judgeId);
  }

  private async metricsOf(
    workspaceId: string,
    refs: EvalMetricRef[],
    evalConfig: EvalConfigEntity | null,
    judgeId: string | null,
  ): Promise<RunMetric[]> {
    const resolution = await this.defaults.inputs(workspaceId, evalConfig);
    const metrics: RunMetric[] = [];
    for (const [i, ref] of refs.entries()) {
      const field = evalConfig ? `eval config metric ${i}` : `metrics.${i}`;
      const resolved = resolveMetric(ref.config_name, evalConfig ? resolution : { ...resolution, evalRefs: refs });
      if (!resolved)
        throw invalid(
          `${field}: "${ref.config_name}" is neither a metric config of the workspace nor a built-in metric`,
          evalConfig ? 'eval_config_id' : `metrics.${i}`,
        );
      const config = resolved.config;
      const metric: RunMetric = {
        name: ref.config_name,
        kind: resolved.kind,
        metric: resolved.metric,
        config: config ? { id: config.id, name: config.name, version: config.configVersion } : null,
        source: resolved.source,
        params: config?.params ?? {},
        threshold: ref.threshold ?? config?.threshold ?? (PASS_AT_ONE.has(resolved.metric) ? 1 : null),
        judged: null,
        judge: null,
        custom_op: null,
        gating: ref.gating,
        min_pass_rate: ref.min_pass_rate,
        better: deterministicMetric(resolved.metric)?.better ?? 'higher',
      };
      if (metric.kind === 'deterministic') checkParams(metric, field, evalConfig ? 'eval_config_id' : `metrics.${i}`);
      await this.attachScorer(workspaceId, metric, config, judgeId, field);
      metrics.push(metric);
    }
    return metrics;
  }

  /** A judged metric's rubric and judge, or a custom metric's op, checked and copied into the snapshot. */
  private async attachScorer(
    workspaceId: string,
    metric: RunMetric,
    config: Resolution['config'],
    judgeId: string | null,
    field: string,
  ): Promise<void> {
    if (metric.kind === 'judged') {
      metric.judged = config?.judged ?? builtinJudged(metric.metric);
      const id = config?.judgeId ?? judgeId;
      if (!id)
        throw new DomainError(
          CatalogueErrors.judge_required,
          `${field}: ${metric.name} is judged and no judge is named: set judge_id (or the eval config's default judge)`,
        );
      const judge = await this.judges.find(workspaceId, id);
      if (!judge) throw invalid(`Workspace ${workspaceId} has no judge ${id}`, 'judge_id');
      metric.judge = {
        id: judge.id,
        name: judge.name,
        connection: judgeConnection(judge),
        secret_id: judge.secretId,
        max_concurrency: judge.maxConcurrency,
      };
    }
    if (metric.kind === 'custom') {
      const endpoint = await this.ops.endpointOf(workspaceId, metric.metric);
      if (!endpoint || endpoint.state !== 'active')
        throw new DomainError(
          RunErrors.metric_unavailable,
          `${field}: custom metric ${metric.metric} is not served by an active custom op${endpoint ? ` (its op is ${endpoint.state})` : ''}`,
        );
      metric.custom_op = {
        name: endpoint.name,
        endpoint_url: endpoint.endpoint_url,
        timeout_ms: endpoint.timeout_ms,
        secret_id: endpoint.secret_id,
      };
    }
  }
}

/** A built-in named without a metric config has no parameters: those that need some (tool_called's tool, regex's pattern) are refused. */
function checkParams(metric: RunMetric, field: string, pointer: string): void {
  try {
    validateMetricParams(metric.metric, metric.params);
  } catch (err) {
    if (!(err instanceof MetricParamsError)) throw err;
    throw invalid(
      `${field}: ${metric.name} ${err.message}; give them in a metric config (POST /metric-configs) and name that`,
      pointer,
    );
  }
}

function builtinJudged(metric: string): JudgedSpec {
  const builtin = judgedMetricDefault(metric);
  return {
    rubric: builtin?.rubric ?? '',
    scale: builtin?.scale ?? FIVE_POINT,
    pass_threshold: builtin?.pass_threshold ?? 0.75,
    pass_labels: null,
  };
}

function invalid(detail: string, field: string): DomainError {
  return new DomainError(RunErrors.run_input_invalid, detail, { field });
}
