import type { JudgeConnection } from '#libs/evaluation/judges/judge.types.js';
import type { PassRule, RunMetricSpec } from '#libs/evaluation/runs/run.types.js';
import type { AdapterSpec, ConnectionSpec } from '#libs/evaluation/sut/sut.types.js';
import type { JudgedSpec, MetricConfigKind } from '../../catalogues/entities/metric-config.entity.js';
import type { RecordedSpec } from './recorded-runs.service.js';
import type { ColumnMapping } from '../../datasets/entities/dataset-version.entity.js';

/** A metric as a run computes it, fixed when the run was created. */
export interface RunMetric extends RunMetricSpec {
  kind: MetricConfigKind;
  /** The built-in metric, `llm_judge`, or the custom op. */
  metric: string;
  /** The metric config version used (frozen by this run), or null for built-in defaults. */
  config: { id: string; name: string; version: number } | null;
  /** How the metric was chosen (see metric-configs/resolved). */
  source: string;
  params: Record<string, unknown>;
  threshold: number | null;
  judged: JudgedSpec | null;
  judge: {
    id: string;
    name: string;
    connection: JudgeConnection;
    secret_id: string | null;
    max_concurrency: number;
  } | null;
  custom_op: { name: string; endpoint_url: string; timeout_ms: number; secret_id: string | null } | null;
}

/** Everything a run needs, taken when it is created, so later edits of its inputs do not change it. */
export interface RunSnapshot {
  dataset: { id: string; name: string; version_id: string; version_number: number; partition_id: string | null };
  mapping: ColumnMapping;
  sut: { id: string; name: string };
  connection: { id: string; name: string; spec: ConnectionSpec };
  adapter: { revision: number; spec: AdapterSpec };
  eval_config: { id: string; name: string } | null;
  metrics: RunMetric[];
  pass_rule: PassRule;
  /** A run over recorded traces: what a row is and how its fields are read (absent for runs that call a SUT). */
  recorded?: RecordedSpec | null;
}
