import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { EXAMPLE_AT, EXAMPLE_ID } from '#libs/common/openapi-examples.js';
import { SortKeys, ValidateIfPresent } from '#libs/common/dto-decorators.js';
import { TrackedRunProperty } from '#libs/queue/dto/tracked-run.dto.js';
import { UNCANCELLABLE_VOCABULARY } from '#libs/queue/tracked-job.js';

export const ANALYSIS_KINDS = ['text', 'annotation', 'visual'] as const;
/** The documented states of analysis and cluster runs: no `cancelled` (a cancelled job shows as `failed`). */
export const ANALYSIS_RUN_STATES = UNCANCELLABLE_VOCABULARY;
/** Rows an analysis or clustering run reads at most. */
export const MAX_ANALYSIS_ROWS = 50_000;
const OPEN = { type: 'object', additionalProperties: true } as const;

export class CreateAnalysisRunRequest {
  /** Analyses to compute (default all three) */
  @ApiPropertyOptional({ enum: ANALYSIS_KINDS, isArray: true, example: ['text', 'annotation', 'visual'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(3)
  @IsIn(ANALYSIS_KINDS, { each: true })
  kinds?: Array<(typeof ANALYSIS_KINDS)[number]>;

  /** Text columns (default: the columns holding mostly text) */
  @ApiPropertyOptional({ example: ['question', 'answer'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(256, { each: true })
  text_columns?: string[];

  /** Label columns (default: columns with 2..20 repeating values); two or more are compared as annotators */
  @ApiPropertyOptional({ example: ['topic'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MaxLength(256, { each: true })
  label_columns?: string[];

  /** The column the visual analysis embeds (default: the mapped input, else the longest text column) */
  @ApiPropertyOptional({ example: 'question' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(256)
  visual_column?: string;

  /** Seed of the projection and clustering (default 42) */
  @ApiPropertyOptional({ example: 42 })
  @ValidateIfPresent()
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  seed?: number;
}

export class AnalysisRunResponse {
  @ApiProperty({ example: EXAMPLE_ID.analysisRun })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ enum: ANALYSIS_KINDS, isArray: true, example: ['text', 'annotation', 'visual'] })
  kinds: string[];
  @TrackedRunProperty.state(ANALYSIS_RUN_STATES)
  state: string;
  @TrackedRunProperty.stateReason()
  state_reason: string | null;
  /** The columns and seed used */
  @ApiProperty({
    ...OPEN,
    example: { text_columns: ['question', 'answer'], label_columns: ['topic'], visual_column: 'question', seed: 42 },
  })
  params: Record<string, unknown>;
  /** {step, done, total} while running */
  @TrackedRunProperty.progress()
  progress: Record<string, unknown> | null;
  @TrackedRunProperty.jobId()
  job_id: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @TrackedRunProperty.createdAt()
  created_at: Date;
  @TrackedRunProperty.startedAt()
  started_at: Date | null;
  @TrackedRunProperty.finishedAt()
  finished_at: Date | null;
}

export class AnalysisQueryRequest {
  /** A filter in the query language (docs/query-language.md) over the row properties of GET /analysis/properties/{kind}, e.g. {"field": "question.tokens", "op": "gt", "value": 500} */
  @ApiPropertyOptional({ ...OPEN, example: { field: 'question.tokens', op: 'gt', value: 50 } })
  @ValidateIfPresent()
  @IsObject()
  filter?: Record<string, unknown>;

  @SortKeys([{ field: 'question.tokens', direction: 'desc' }])
  sort?: Array<Record<string, unknown>>;

  /** 1..1000, default 100 */
  @ApiPropertyOptional({ example: 100 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;

  @ApiPropertyOptional({ example: 0 })
  @ValidateIfPresent()
  @IsInt()
  @Min(0)
  @Max(10_000_000)
  offset?: number;
}

export class TextAnalysisResult {
  @ApiProperty({ example: EXAMPLE_ID.analysisRun })
  run_id: string;
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ example: EXAMPLE_AT.finished })
  computed_at: Date;
  @ApiProperty({ example: 214 })
  rows: number;
  /** Per text column: lengths in characters, words and tokens (cl100k_base) with histograms, languages, vocabulary, top terms, readability, empty and near-empty rates */
  @ApiProperty({
    type: 'array',
    items: OPEN,
    example: [{ name: 'question', tokens: { mean: 14.2, p95: 31 }, languages: { en: 0.97, de: 0.03 } }],
  })
  columns: Array<Record<string, unknown>>;
}

export class VisualPointDto {
  @ApiProperty({ example: EXAMPLE_ID.rows[0] })
  row_id: string;
  @ApiProperty({ example: 0.42 })
  x: number;
  @ApiProperty({ example: -1.17 })
  y: number;
  @ApiProperty({ example: 2 })
  cluster: number;
}

export class VisualClusterDto {
  @ApiProperty({ example: 2 })
  id: number;
  @ApiProperty({ example: 37 })
  size: number;
  @ApiProperty({ example: 'password reset login' })
  name: string;
}

export class VisualAnalysisResult {
  @ApiProperty({ example: EXAMPLE_ID.analysisRun })
  run_id: string;
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ example: EXAMPLE_AT.finished })
  computed_at: Date;
  /** The column embedded */
  @ApiProperty({ example: 'question' })
  column: string;
  /** The workspace's embedder used */
  @ApiProperty({ example: 'local-char-ngram' })
  embedder: string;
  /** pca or umap */
  @ApiProperty({ example: 'pca' })
  projection: string;
  @ApiProperty({ type: () => [VisualPointDto] })
  points: VisualPointDto[];
  @ApiProperty({ type: () => [VisualClusterDto] })
  clusters: VisualClusterDto[];
}

export class CreateClusterRunRequest {
  /** The text column to embed and cluster (default: the mapped input, else the longest text column) */
  @ApiPropertyOptional({ example: 'question' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(256)
  column?: string;

  /** Clusters wanted; default chosen by silhouette between 2 and 10 */
  @ApiPropertyOptional({ example: 6 })
  @ValidateIfPresent()
  @IsInt()
  @Min(2)
  @Max(50)
  k?: number;

  /** The same seed gives the same clusters (default 42) */
  @ApiPropertyOptional({ example: 42 })
  @ValidateIfPresent()
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  seed?: number;
}

export class DatasetClustersRun {
  @ApiProperty({ example: EXAMPLE_ID.clusterRun })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @TrackedRunProperty.state(ANALYSIS_RUN_STATES)
  state: string;
  @TrackedRunProperty.stateReason()
  state_reason: string | null;
  @ApiProperty({ example: 'question' })
  column: string;
  @ApiProperty({ type: 'integer', nullable: true, example: 6 })
  k_requested: number | null;
  @ApiProperty({ example: 42 })
  seed: number;
  @ApiProperty({ type: 'string', nullable: true, example: 'local-char-ngram' })
  embedder: string | null;
  /** Once succeeded: the k chosen, its silhouette and the cluster count */
  @ApiProperty({
    type: 'object',
    properties: { k: { type: 'integer' }, silhouette: { type: 'number', nullable: true }, rows: { type: 'integer' } },
    nullable: true,
    example: { k: 6, silhouette: 0.31, rows: 214 },
  })
  summary: { k: number; silhouette: number | null; rows: number } | null;
  @TrackedRunProperty.progress()
  progress: Record<string, unknown> | null;
  @TrackedRunProperty.jobId()
  job_id: string | null;
  @TrackedRunProperty.createdAt()
  created_at: Date;
  @TrackedRunProperty.finishedAt()
  finished_at: Date | null;
}

export class ClusterDto {
  @ApiProperty({ example: 2 })
  id: number;
  @ApiProperty({ example: 37 })
  size: number;
  /** Its three most distinctive terms (class-based TF-IDF) */
  @ApiProperty({ example: 'password reset login' })
  name: string;
  @ApiProperty({
    type: 'array',
    items: { type: 'object', properties: { term: { type: 'string' }, weight: { type: 'number' } } },
    example: [
      { term: 'password', weight: 0.41 },
      { term: 'reset', weight: 0.33 },
    ],
  })
  terms: Array<{ term: string; weight: number }>;
  /** The members closest to the centroid */
  @ApiProperty({ example: [EXAMPLE_ID.rows[0]] })
  exemplar_row_ids: string[];
}

export class DatasetClustersResult {
  @ApiProperty({ example: EXAMPLE_ID.clusterRun })
  run_id: string;
  @ApiProperty({ example: 'question' })
  column: string;
  @ApiProperty({ example: 'local-char-ngram' })
  embedder: string;
  @ApiProperty({ example: 6 })
  k: number;
  @ApiProperty({ type: 'number', nullable: true, example: 0.31 })
  silhouette: number | null;
  /** pca or umap */
  @ApiProperty({ example: 'pca' })
  projection: string;
  @ApiProperty({ type: () => [ClusterDto] })
  clusters: ClusterDto[];
  @ApiProperty({ type: () => [VisualPointDto] })
  points: VisualPointDto[];
}

export class TextColumnDto {
  @ApiProperty({ example: 'question' })
  name: string;
  /** Rows with a non-empty value */
  @ApiProperty({ example: 214 })
  non_empty: number;
}

export class DatasetClustersAvailability {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  @ApiProperty({ example: true })
  available: boolean;
  /** Why not, when not */
  @ApiProperty({ type: 'string', nullable: true, example: null })
  reason: string | null;
  @ApiProperty({ example: 214 })
  rows: number;
  @ApiProperty({ example: 50000 })
  max_rows: number;
  @ApiProperty({ type: () => [TextColumnDto] })
  text_columns: TextColumnDto[];
  @ApiProperty({ type: 'string', nullable: true, example: 'question' })
  suggested_column: string | null;
  /** The embedder the workspace uses */
  @ApiProperty({ example: 'local-char-ngram' })
  embedder: string;
}

export class AnalysisPropertyDto {
  @ApiProperty({ example: 'question.tokens' })
  name: string;
  @ApiProperty({ enum: ['integer', 'number', 'string', 'boolean'], example: 'integer' })
  type: string;
  /** row (filterable with the analysis query paths), column or version */
  @ApiProperty({ enum: ['row', 'column', 'version'], example: 'row' })
  level: string;
  @ApiProperty({ example: 'Tokens of the question (cl100k_base)' })
  description: string;
}
