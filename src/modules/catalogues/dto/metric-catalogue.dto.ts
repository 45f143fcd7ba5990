import { ApiProperty } from '@nestjs/swagger';
import { EXAMPLE_ID } from '#libs/common/openapi-examples.js';

export class CatalogueMetric {
  /** The metric's name, as eval configs, defaults and runs refer to it */
  @ApiProperty({ example: 'rouge_l' })
  name: string;
  @ApiProperty({ enum: ['deterministic', 'judged', 'custom'], example: 'deterministic' })
  kind: 'deterministic' | 'judged' | 'custom';
  @ApiProperty({ example: 'ROUGE-L F-measure of the output against the expected output' })
  description: string;
  /** `builtin` (the service's own), `metric_config` (the workspace's named config, newest version) or `custom_op` (a registered metric op) */
  @ApiProperty({ enum: ['builtin', 'metric_config', 'custom_op'], example: 'builtin' })
  source: 'builtin' | 'metric_config' | 'custom_op';
  /** Canonical dataset fields the metric reads (map them on a dataset version) */
  @ApiProperty({ enum: ['input', 'expected_output', 'context'], isArray: true, example: ['expected_output'] })
  requires: string[];
  /** Whether a larger score is better (similarities) or a smaller one (latency, cost, length); null for judged metrics, whose scale their config sets */
  @ApiProperty({ enum: ['higher', 'lower'], nullable: true, example: 'higher' })
  better: 'higher' | 'lower' | null;
  /** JSON Schema of the parameters (built-in deterministic metrics and custom ops; configs carry theirs already set) */
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: { type: 'object', properties: { threshold: { type: 'number' } }, additionalProperties: false },
  })
  params_schema: Record<string, unknown> | null;
  /** The newest version (metric configs and custom ops); null for built-ins */
  @ApiProperty({ type: 'integer', nullable: true, example: null })
  latest_version: number | null;
  /** False for a custom op that is not active */
  @ApiProperty({ example: true })
  available: boolean;
}

export class WorkspaceMetricCatalogue {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ type: () => [CatalogueMetric] })
  metrics: CatalogueMetric[];
}
