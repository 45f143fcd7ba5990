import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsObject, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';

const present = (_: object, value: unknown) => value !== undefined;
export const ANALYSIS_KINDS = ['text', 'annotation', 'visual'] as const;
export const ANALYSIS_STATES = ['queued', 'running', 'succeeded', 'failed'] as const;
/** Rows an analysis or clustering run reads at most. */
export const MAX_ANALYSIS_ROWS = 50_000;
const OPEN = { type: 'object', additionalProperties: true } as const;

export class CreateAnalysisRunRequest {
  /** Analyses to compute (default all three) */
  @ApiPropertyOptional({ enum: ANALYSIS_KINDS, isArray: true })
  @ValidateIf(present) @IsArray() @ArrayMinSize(1) @ArrayMaxSize(3) @IsIn(ANALYSIS_KINDS, { each: true })
  kinds?: Array<(typeof ANALYSIS_KINDS)[number]>;

  /** Text columns (default: the columns holding mostly text) */
  @ValidateIf(present) @IsArray() @ArrayMaxSize(50) @IsString({ each: true }) @MaxLength(256, { each: true })
  text_columns?: string[];

  /** Label columns (default: columns with 2..20 repeating values); two or more are compared as annotators */
  @ValidateIf(present) @IsArray() @ArrayMaxSize(20) @IsString({ each: true }) @MaxLength(256, { each: true })
  label_columns?: string[];

  /** The column the visual analysis embeds (default: the mapped input, else the longest text column) */
  @ValidateIf(present) @IsString() @MaxLength(256)
  visual_column?: string;

  /** Seed of the projection and clustering (default 42) */
  @ValidateIf(present) @IsInt() @Min(0) @Max(2_147_483_647)
  seed?: number;
}

export class AnalysisRunResponse {
  id: string;
  workspace_id: string;
  dataset_id: string;
  version_id: string;
  @ApiProperty({ enum: ANALYSIS_KINDS, isArray: true })
  kinds: string[];
  @ApiProperty({ enum: ANALYSIS_STATES })
  state: string;
  @ApiProperty({ type: 'string', nullable: true })
  state_reason: string | null;
  /** The columns and seed used */
  @ApiProperty(OPEN)
  params: Record<string, unknown>;
  /** {step, done, total} while running */
  @ApiProperty({ ...OPEN, nullable: true })
  progress: Record<string, unknown> | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  job_id: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  started_at: Date | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  finished_at: Date | null;
}

export class AnalysisQueryRequest {
  /** A filter in the query language (docs/query-language.md) over the row properties of GET /analysis/properties/{kind}, e.g. {"field": "question.tokens", "op": "gt", "value": 500} */
  @ApiPropertyOptional(OPEN)
  @ValidateIf(present) @IsObject()
  filter?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, direction: { type: 'string', enum: ['asc', 'desc'] } }, required: ['field'] } })
  @ValidateIf(present) @IsArray()
  sort?: Array<Record<string, unknown>>;

  /** 1..1000, default 100 */
  @ValidateIf(present) @IsInt() @Min(1) @Max(1000)
  limit?: number;

  @ValidateIf(present) @IsInt() @Min(0) @Max(10_000_000)
  offset?: number;
}

export class TextAnalysisResult {
  run_id: string;
  dataset_id: string;
  version_id: string;
  computed_at: Date;
  rows: number;
  /** Per text column: lengths in characters, words and tokens (cl100k_base) with histograms, languages, vocabulary, top terms, readability, empty and near-empty rates */
  @ApiProperty({ type: 'array', items: OPEN })
  columns: Array<Record<string, unknown>>;
}

export class VisualPointDto {
  row_id: string;
  x: number;
  y: number;
  cluster: number;
}

export class VisualClusterDto {
  id: number;
  size: number;
  name: string;
}

export class VisualAnalysisResult {
  run_id: string;
  dataset_id: string;
  version_id: string;
  computed_at: Date;
  /** The column embedded */
  column: string;
  /** The workspace's embedder used */
  embedder: string;
  /** pca or umap */
  projection: string;
  @ApiProperty({ type: () => [VisualPointDto] })
  points: VisualPointDto[];
  @ApiProperty({ type: () => [VisualClusterDto] })
  clusters: VisualClusterDto[];
}

export class CreateClusterRunRequest {
  /** The text column to embed and cluster (default: the mapped input, else the longest text column) */
  @ValidateIf(present) @IsString() @MaxLength(256)
  column?: string;

  /** Clusters wanted; default chosen by silhouette between 2 and 10 */
  @ValidateIf(present) @IsInt() @Min(2) @Max(50)
  k?: number;

  /** The same seed gives the same clusters (default 42) */
  @ValidateIf(present) @IsInt() @Min(0) @Max(2_147_483_647)
  seed?: number;
}

export class DatasetClustersRun {
  id: string;
  dataset_id: string;
  version_id: string;
  @ApiProperty({ enum: ANALYSIS_STATES })
  state: string;
  @ApiProperty({ type: 'string', nullable: true })
  state_reason: string | null;
  column: string;
  @ApiProperty({ type: 'integer', nullable: true })
  k_requested: number | null;
  seed: number;
  @ApiProperty({ type: 'string', nullable: true })
  embedder: string | null;
  /** Once succeeded: the k chosen, its silhouette and the cluster count */
  @ApiProperty({ type: 'object', properties: { k: { type: 'integer' }, silhouette: { type: 'number', nullable: true }, rows: { type: 'integer' } }, nullable: true })
  summary: { k: number; silhouette: number | null; rows: number } | null;
  @ApiProperty({ ...OPEN, nullable: true })
  progress: Record<string, unknown> | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  job_id: string | null;
  created_at: Date;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  finished_at: Date | null;
}

export class ClusterDto {
  id: number;
  size: number;
  /** Its three most distinctive terms (class-based TF-IDF) */
  name: string;
  @ApiProperty({ type: 'array', items: { type: 'object', properties: { term: { type: 'string' }, weight: { type: 'number' } } } })
  terms: Array<{ term: string; weight: number }>;
  /** The members closest to the centroid */
  exemplar_row_ids: string[];
}

export class DatasetClustersResult {
  run_id: string;
  column: string;
  embedder: string;
  k: number;
  @ApiProperty({ type: 'number', nullable: true })
  silhouette: number | null;
  /** pca or umap */
  projection: string;
  @ApiProperty({ type: () => [ClusterDto] })
  clusters: ClusterDto[];
  @ApiProperty({ type: () => [VisualPointDto] })
  points: VisualPointDto[];
}

export class TextColumnDto {
  name: string;
  /** Rows with a non-empty value */
  non_empty: number;
}

export class DatasetClustersAvailability {
  dataset_id: string;
  version_id: string;
  available: boolean;
  /** Why not, when not */
  @ApiProperty({ type: 'string', nullable: true })
  reason: string | null;
  rows: number;
  max_rows: number;
  @ApiProperty({ type: () => [TextColumnDto] })
  text_columns: TextColumnDto[];
  @ApiProperty({ type: 'string', nullable: true })
  suggested_column: string | null;
  /** The embedder the workspace uses */
  embedder: string;
}

export class AnalysisPropertyDto {
  name: string;
  @ApiProperty({ enum: ['integer', 'number', 'string', 'boolean'] })
  type: string;
  /** row (filterable with the analysis query paths), column or version */
  @ApiProperty({ enum: ['row', 'column', 'version'] })
  level: string;
  description: string;
}
