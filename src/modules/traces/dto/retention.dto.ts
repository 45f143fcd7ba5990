import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Max, Min, ValidateIf } from 'class-validator';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID } from '#libs/common/openapi-examples.js';

export const MAX_RETENTION_DAYS = 3650;

@ApiSchemaExample({ retention_days: 30 })
export class PutTraceRetentionRequest {
  /** Days trace data is kept (1 .. 3650); null keeps it forever */
  @ApiProperty({ type: 'integer', nullable: true, minimum: 1, maximum: MAX_RETENTION_DAYS, example: 30 })
  @ValidateIf((_, value) => value !== null)
  @IsInt()
  @Min(1)
  @Max(MAX_RETENTION_DAYS)
  retention_days: number | null;
}

class DatasetRetentionItem {
  @ApiProperty({ example: EXAMPLE_ID.traceDataset })
  dataset_id: string;
  /** The dataset's own setting (null: kept forever, whatever the workspace's) */
  @ApiProperty({ type: 'integer', nullable: true, example: 7 })
  retention_days: number | null;
}

/** How long a workspace keeps trace data: its default, and the datasets that set their own. */
export class TraceRetentionResponse {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  /** The workspace's default for trace datasets, uploads and landing payloads (null: kept forever) */
  @ApiProperty({ type: 'integer', nullable: true, example: 30 })
  retention_days: number | null;
  @ApiProperty({ type: [DatasetRetentionItem] })
  datasets: DatasetRetentionItem[];
}

/** How long one trace dataset's spans are kept. */
export class DatasetTraceRetentionResponse {
  @ApiProperty({ example: EXAMPLE_ID.traceDataset })
  dataset_id: string;
  /** The dataset's own setting; null with `inherited: false` keeps its spans forever */
  @ApiProperty({ type: 'integer', nullable: true, example: 7 })
  retention_days: number | null;
  /** True when the dataset has no setting of its own and follows its workspace's */
  @ApiProperty({ example: false })
  inherited: boolean;
  /** The retention that applies (null: kept forever) */
  @ApiProperty({ type: 'integer', nullable: true, example: 7 })
  effective_retention_days: number | null;
}

class SweptDataset {
  @ApiProperty({ example: EXAMPLE_ID.traceDataset })
  dataset_id: string;
  @ApiProperty({ example: 7 })
  retention_days: number;
  /** Spans that started before this were deleted */
  @ApiProperty({ example: EXAMPLE_AT.created })
  cutoff: Date;
  @ApiProperty({ example: 1180 })
  spans_deleted: number;
  /** Scores of online evaluation on traces that started before the cutoff */
  @ApiProperty({ example: 240 })
  scores_deleted: number;
  /** Versions whose rows (and statistics) changed */
  @ApiProperty({ example: 2 })
  versions_updated: number;
}

/** What one retention sweep removed. */
export class TraceRetentionSweepResponse {
  @ApiProperty({ example: EXAMPLE_AT.finished })
  swept_at: Date;
  @ApiProperty({ type: [SweptDataset] })
  datasets: SweptDataset[];
  /** Trace uploads (and their files under DATA_DIR/trace-uploads) older than the workspace's retention */
  @ApiProperty({ example: 3 })
  uploads_deleted: number;
  /** Inline landing bodies and dropped records' payloads cleared (their counts and reasons stay) */
  @ApiProperty({ example: 12 })
  payloads_cleared: number;
  /** End users' feedback on traces (POST /traces/feedback) posted before the workspace's retention */
  @ApiProperty({ example: 4 })
  feedback_deleted: number;
}
