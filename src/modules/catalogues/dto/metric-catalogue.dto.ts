import { ApiProperty } from '@nestjs/swagger';

export class CatalogueMetric {
  /** The metric's name, as metric configs and runs refer to it */
  name: string;
  @ApiProperty({ enum: ['deterministic', 'judged'] })
  kind: 'deterministic' | 'judged';
  description: string;
  /** Where the metric comes from: `builtin` (workspace metric configs join with issue 5) */
  @ApiProperty({ enum: ['builtin'] })
  source: 'builtin';
  /** Canonical dataset fields the metric reads (map them on a dataset version) */
  @ApiProperty({ enum: ['input', 'expected_output', 'context'], isArray: true })
  requires: string[];
  /** Whether a larger score is better (similarities) or a smaller one (latency, cost, length); null for judged metrics, whose scale their config sets */
  @ApiProperty({ enum: ['higher', 'lower'], nullable: true })
  better: 'higher' | 'lower' | null;
  /** JSON Schema of the metric's parameters (deterministic metrics) */
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  params_schema: Record<string, unknown> | null;
}

export class WorkspaceMetricCatalogue {
  workspace_id: string;
  @ApiProperty({ type: () => [CatalogueMetric] })
  metrics: CatalogueMetric[];
}
