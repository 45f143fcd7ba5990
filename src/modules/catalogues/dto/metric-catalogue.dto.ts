import { ApiProperty } from '@nestjs/swagger';

export class CatalogueMetric {
  /** The metric's name, as eval configs, defaults and runs refer to it */
  name: string;
  @ApiProperty({ enum: ['deterministic', 'judged', 'custom'] })
  kind: 'deterministic' | 'judged' | 'custom';
  description: string;
  /** `builtin` (the service's own), `metric_config` (the workspace's named config, newest version) or `custom_op` (a registered metric op) */
  @ApiProperty({ enum: ['builtin', 'metric_config', 'custom_op'] })
  source: 'builtin' | 'metric_config' | 'custom_op';
  /** Canonical dataset fields the metric reads (map them on a dataset version) */
  @ApiProperty({ enum: ['input', 'expected_output', 'context'], isArray: true })
  requires: string[];
  /** Whether a larger score is better (similarities) or a smaller one (latency, cost, length); null for judged metrics, whose scale their config sets */
  @ApiProperty({ enum: ['higher', 'lower'], nullable: true })
  better: 'higher' | 'lower' | null;
  /** JSON Schema of the parameters (built-in deterministic metrics and custom ops; configs carry theirs already set) */
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  params_schema: Record<string, unknown> | null;
  /** The newest version (metric configs and custom ops); null for built-ins */
  @ApiProperty({ type: 'integer', nullable: true })
  latest_version: number | null;
  /** False for a custom op that is not active */
  available: boolean;
}

export class WorkspaceMetricCatalogue {
  workspace_id: string;
  @ApiProperty({ type: () => [CatalogueMetric] })
  metrics: CatalogueMetric[];
}
