import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { PageQueryDto } from '#libs/common/pagination.js';
import { EXAMPLE_AT, EXAMPLE_ID } from '#libs/common/openapi-examples.js';
import { NestedObject } from '#libs/common/record-validators.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';
import { RUBRIC_FIELD_TYPES, type RubricFieldType } from '../review.rules.js';
import {
  FEEDBACK_LIMITS,
  FEEDBACK_VALUE_SCHEMA,
  IsFeedbackValue,
  type FeedbackValue,
} from '../../traces/dto/feedback.dto.js';
import {
  IsLabelValue,
  JudgeValidationSettings,
  LABEL_VALUE_SCHEMA,
  type LabelValue,
} from '../../runs/dto/judge-validation.dto.js';

/** Fields a rubric holds at most. */
export const MAX_RUBRIC_FIELDS = 20;
/** Reviewers (and adjudicators) a queue names at most. */
export const MAX_QUEUE_REVIEWERS = 100;
/** Items one request adds at most (and explicit ids it names). */
export const MAX_ITEMS_PER_REQUEST = 1000;
/** Rows a filter is read over, at most, before sampling. */
export const MAX_FILTER_CANDIDATES = 10_000;
/** A stable example id of a queue and an item. */
export const EXAMPLE_QUEUE_ID = '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a51';
export const EXAMPLE_ITEM_ID = '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a52';

const EXAMPLE_RUBRIC = [
  { name: 'correct', type: 'pass_fail', required: true },
  { name: 'tone', type: 'categorical', required: false, options: ['curt', 'neutral', 'warm'] },
  { name: 'helpfulness', type: 'numeric', required: false, min: 1, max: 5 },
  { name: 'note', type: 'free_text', required: false },
];
const EXAMPLE_LABEL = { correct: true, tone: 'warm', helpfulness: 4 };

export class RubricFieldDto {
  /** 1..64 letters, digits or underscores, starting with a letter */
  @ApiProperty({ example: 'correct' })
  @IsString()
  @MaxLength(64)
  @Matches(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, {
    message: 'name must be 1..64 letters, digits or _, starting with a letter',
  })
  name: string;

  @ApiProperty({ enum: RUBRIC_FIELD_TYPES, example: 'pass_fail' })
  @IsIn(RUBRIC_FIELD_TYPES)
  type: RubricFieldType;

  /** Whether every label must give it (default false); final labels agree on every required field */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  required?: boolean;

  @ApiPropertyOptional({ example: 'Does the answer state the right facts?' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(1000)
  description?: string;

  /** categorical: 2..50 distinct options, in their order */
  @ApiPropertyOptional({ example: ['curt', 'neutral', 'warm'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(2)
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(200, { each: true })
  options?: string[];

  /** numeric: the lowest score (an integer) */
  @ApiPropertyOptional({ example: 1 })
  @ValidateIfPresent()
  @IsInt()
  @Min(-1000)
  @Max(1000)
  min?: number;

  /** numeric: the highest score (an integer above min) */
  @ApiPropertyOptional({ example: 5 })
  @ValidateIfPresent()
  @IsInt()
  @Min(-1000)
  @Max(1000)
  max?: number;
}

export class RubricDto {
  /** 1..20 fields, at least one required */
  @ApiProperty({ maxItems: MAX_RUBRIC_FIELDS, type: [RubricFieldDto], example: EXAMPLE_RUBRIC })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_RUBRIC_FIELDS)
  @NestedObject(() => RubricFieldDto, { each: true })
  fields: RubricFieldDto[];
}

export const REVIEW_SOURCE_KINDS = ['run', 'dataset_version', 'traces', 'sessions'] as const;
export type ReviewSourceKind = (typeof REVIEW_SOURCE_KINDS)[number];

export class ReviewSourceDto {
  /** `run`: rows of a run; `dataset_version`: rows of a dataset version; `traces` / `sessions`: traces or sessions of a trace dataset version */
  @ApiProperty({ enum: REVIEW_SOURCE_KINDS, example: 'dataset_version' })
  @IsIn(REVIEW_SOURCE_KINDS)
  kind: ReviewSourceKind;

  /** The run id (`run`) or the dataset version id (the others) */
  @ApiProperty({ example: EXAMPLE_ID.version })
  @IsUUID()
  id: string;
}

export class CreateReviewQueueRequest {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  @ApiProperty({ example: 'Refund answers, week 12' })
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ example: 'Confirm the judge failures on refund questions' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @ApiProperty({ type: RubricDto })
  @NestedObject(() => RubricDto)
  rubric: RubricDto;

  @ApiProperty({ type: ReviewSourceDto })
  @NestedObject(() => ReviewSourceDto)
  source: ReviewSourceDto;

  /** Reviewers each item needs, 1..10 (default 1) */
  @ApiPropertyOptional({ example: 2, minimum: 1, maximum: 10 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(10)
  overlap?: number;

  /** Who reviews: null or absent for any member (role member or above), else up to 100 user ids, each a member */
  @ApiPropertyOptional({ maxItems: MAX_QUEUE_REVIEWERS, type: [String], nullable: true, example: [EXAMPLE_ID.user] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_QUEUE_REVIEWERS)
  @IsUUID('all', { each: true })
  reviewers?: string[] | null;

  /** Who adjudicates besides admins: up to 100 user ids, each a member */
  @ApiPropertyOptional({ maxItems: MAX_QUEUE_REVIEWERS, type: [String], nullable: true, example: [] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_QUEUE_REVIEWERS)
  @IsUUID('all', { each: true })
  adjudicators?: string[] | null;

  /** How long a reviewer holds an item, 1..1440 minutes (default 15) */
  @ApiPropertyOptional({ example: 15, minimum: 1, maximum: 1440 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(1440)
  lease_minutes?: number;

  /**
   * Whether reviewers and adjudicators see the run's verdicts and scores (a judge's label and
   * reason) beside a row's output. Off by default: labels given with a judge's verdict in view lean
   * towards it, and a judge validated against them looks better than it is.
   */
  @ApiPropertyOptional({ example: false })
  @ValidateIfPresent()
  @IsBoolean()
  show_verdicts?: boolean;
}

export class UpdateReviewQueueRequest {
  @ApiPropertyOptional({ example: 'Refund answers, week 12' })
  @ValidateIfPresent()
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ example: 'Confirm the judge failures on refund questions' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  /** `closed` stops leases, labels and new items; `open` resumes */
  @ApiPropertyOptional({ enum: ['open', 'closed'], example: 'open' })
  @ValidateIfPresent()
  @IsIn(['open', 'closed'])
  state?: 'open' | 'closed';

  /** A new rubric: the queue's next rubric version (labels keep the version they were given under) */
  @ApiPropertyOptional({ type: RubricDto })
  @ValidateIfPresent()
  @NestedObject(() => RubricDto)
  rubric?: RubricDto;

  @ApiPropertyOptional({ example: 2, minimum: 1, maximum: 10 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(10)
  overlap?: number;

  @ApiPropertyOptional({ maxItems: MAX_QUEUE_REVIEWERS, type: [String], nullable: true, example: [EXAMPLE_ID.user] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_QUEUE_REVIEWERS)
  @IsUUID('all', { each: true })
  reviewers?: string[] | null;

  @ApiPropertyOptional({ maxItems: MAX_QUEUE_REVIEWERS, type: [String], nullable: true, example: [] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_QUEUE_REVIEWERS)
  @IsUUID('all', { each: true })
  adjudicators?: string[] | null;

  @ApiPropertyOptional({ example: 15, minimum: 1, maximum: 1440 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(1440)
  lease_minutes?: number;

  /** Whether reviewers see the run's verdicts and scores beside a row's output */
  @ApiPropertyOptional({ example: false })
  @ValidateIfPresent()
  @IsBoolean()
  show_verdicts?: boolean;
}

export class ListReviewQueuesQuery extends PageQueryDto {
  @IsUUID()
  workspace_id: string;

  @ApiPropertyOptional({ enum: ['open', 'closed'] })
  @ValidateIfPresent()
  @IsIn(['open', 'closed'])
  state?: 'open' | 'closed';
}

export class RubricFieldResponse {
  @ApiProperty({ example: 'correct' })
  name: string;
  @ApiProperty({ enum: RUBRIC_FIELD_TYPES, example: 'pass_fail' })
  type: RubricFieldType;
  @ApiProperty({ example: true })
  required: boolean;
  @ApiPropertyOptional({ example: 'Does the answer state the right facts?' })
  description?: string;
  @ApiPropertyOptional({ example: ['curt', 'neutral', 'warm'] })
  options?: string[];
  @ApiPropertyOptional({ example: 1 })
  min?: number;
  @ApiPropertyOptional({ example: 5 })
  max?: number;
}

export class RubricVersionResponse {
  @ApiProperty({ example: 1 })
  version: number;
  @ApiProperty({ type: [RubricFieldResponse], example: EXAMPLE_RUBRIC })
  fields: RubricFieldResponse[];
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class RubricVersionList {
  @ApiProperty({ type: [RubricVersionResponse] })
  items: RubricVersionResponse[];
}

export class ReviewItemCounts {
  @ApiProperty({ example: 60 })
  total: number;
  @ApiProperty({ example: 40 })
  pending: number;
  @ApiProperty({ example: 15 })
  final: number;
  @ApiProperty({ example: 5 })
  disagreement: number;
}

export class ReviewQueueResponse {
  @ApiProperty({ example: EXAMPLE_QUEUE_ID })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: 'Refund answers, week 12' })
  name: string;
  @ApiProperty({ example: 'Confirm the judge failures on refund questions' })
  description: string;
  @ApiProperty({ enum: ['open', 'closed'], example: 'open' })
  state: 'open' | 'closed';
  @ApiProperty({ type: ReviewSourceDto })
  source: ReviewSourceDto;
  @ApiProperty({ example: 2 })
  overlap: number;
  @ApiProperty({ type: [String], nullable: true, example: [EXAMPLE_ID.user] })
  reviewers: string[] | null;
  @ApiProperty({ type: [String], example: [] })
  adjudicators: string[];
  @ApiProperty({ example: 15 })
  lease_minutes: number;
  /** Whether item contexts carry the run's verdicts and scores (`passed`, `scores`) */
  @ApiProperty({ example: false })
  show_verdicts: boolean;
  @ApiProperty({ type: RubricVersionResponse })
  rubric: RubricVersionResponse;
  @ApiProperty({ type: ReviewItemCounts })
  items: ReviewItemCounts;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}

export class SampleDto {
  /** How many of the matching rows to take, 1..1000 */
  @ApiProperty({ example: 60 })
  @IsInt()
  @Min(1)
  @Max(MAX_ITEMS_PER_REQUEST)
  size: number;

  /** The same seed over the same rows takes the same rows */
  @ApiProperty({ example: 42 })
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  seed: number;
}

export class RunFailuresDto {
  /** Rows whose score of this metric failed; absent: rows whose verdict failed */
  @ApiPropertyOptional({ example: 'faithfulness' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  metric?: string;
}

/** Traces with end-user feedback of a name: equal to `value`, or a score within `min` .. `max` */
export class FeedbackSelectionDto {
  /** The feedback's name (e.g. `thumbs`, `user_rating`) */
  @ApiProperty({ example: 'thumbs' })
  @IsString()
  @MinLength(1)
  @MaxLength(FEEDBACK_LIMITS.nameLength)
  name: string;

  /** Equal to this value: a thumbs' boolean, a score, a category */
  @ApiPropertyOptional({ ...FEEDBACK_VALUE_SCHEMA, example: false })
  @ValidateIfPresent()
  @IsFeedbackValue()
  value?: FeedbackValue;

  /** Scores at least this */
  @ApiPropertyOptional({ example: 1 })
  @ValidateIfPresent()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  min?: number;

  /** Scores at most this */
  @ApiPropertyOptional({ example: 2 })
  @ValidateIfPresent()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  max?: number;
}

export class AddReviewItemsRequest {
  /** A filter in the query language (docs/query-language.md) over the source's rows (for traces and sessions: their spans) */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { field: 'topic', op: 'eq', value: 'refunds' },
  })
  @ValidateIfPresent()
  @IsObject()
  filter?: Record<string, unknown>;

  /** With `filter` or `feedback`: a seeded random sample of the matching rows (traces, sessions) */
  @ApiPropertyOptional({ type: SampleDto })
  @ValidateIfPresent()
  @NestedObject(() => SampleDto)
  sample?: SampleDto;

  /** Row ids (run, dataset version), trace ids or session ids: 1..1000 */
  @ApiPropertyOptional({ maxItems: MAX_ITEMS_PER_REQUEST, example: ['0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a60'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_ITEMS_PER_REQUEST)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(200, { each: true })
  ids?: string[];

  /** A run source's failed rows (by verdict, or by one metric) */
  @ApiPropertyOptional({ type: RunFailuresDto })
  @ValidateIfPresent()
  @NestedObject(() => RunFailuresDto)
  run_failures?: RunFailuresDto;

  /** A trace or session source's traces that have end-user feedback of this kind (sessions: the sessions of those traces) */
  @ApiPropertyOptional({ type: FeedbackSelectionDto })
  @ValidateIfPresent()
  @NestedObject(() => FeedbackSelectionDto)
  feedback?: FeedbackSelectionDto;
}

export class AddReviewItemsResponse {
  /** Items added */
  @ApiProperty({ example: 58 })
  added: number;
  /** Items the queue already had */
  @ApiProperty({ example: 2 })
  skipped: number;
  /** Ids named that the source does not have */
  @ApiProperty({ example: [] })
  not_found: string[];
  @ApiProperty({ example: 60 })
  total: number;
}

export class ListReviewItemsQuery extends PageQueryDto {
  @ApiPropertyOptional({ enum: ['pending', 'final', 'disagreement'] })
  @ValidateIfPresent()
  @IsIn(['pending', 'final', 'disagreement'])
  state?: 'pending' | 'final' | 'disagreement';
}

export class ReviewItemResponse {
  @ApiProperty({ example: EXAMPLE_ITEM_ID })
  id: string;
  @ApiProperty({ example: EXAMPLE_QUEUE_ID })
  queue_id: string;
  /** The row id, trace id or session id in the source */
  @ApiProperty({ example: '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a60' })
  ref: string;
  /** The run's id for a run source, else null */
  @ApiProperty({ type: 'string', nullable: true, example: null })
  run_id: string | null;
  /** What a reviewer needs: for a row its input, expected output, output and the run's verdicts; for a trace its spans */
  @ApiProperty({ type: 'object', additionalProperties: true, example: { input: 'How do I get a refund?' } })
  context: Record<string, unknown>;
  @ApiProperty({ enum: ['pending', 'final', 'disagreement'], example: 'pending' })
  state: 'pending' | 'final' | 'disagreement';
  /** Labels given so far */
  @ApiProperty({ example: 1 })
  labelled: number;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, example: null })
  final_label: Record<string, unknown> | null;
  @ApiProperty({ enum: ['consensus', 'adjudication'], nullable: true, example: 'consensus' })
  final_source: 'consensus' | 'adjudication' | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class LeasedItemResponse {
  @ApiProperty({ type: ReviewItemResponse })
  item: ReviewItemResponse;
  /** The rubric version to label under */
  @ApiProperty({ type: RubricVersionResponse })
  rubric: RubricVersionResponse;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  lease_expires_at: Date;
}

export class SubmitLabelRequest {
  /** Field name → value: pass_fail true/false, categorical one option, numeric an integer in the scale, free_text text */
  @ApiProperty({ type: 'object', additionalProperties: true, example: EXAMPLE_LABEL })
  @IsObject()
  values: Record<string, unknown>;
}

export class SkipItemRequest {
  @ApiPropertyOptional({ example: 'Not my language' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(1000)
  reason?: string;
}

export class LabelChange {
  @ApiProperty({ type: 'object', additionalProperties: true, example: EXAMPLE_LABEL })
  values: Record<string, unknown>;
  @ApiProperty({ example: EXAMPLE_ID.user })
  by: string;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  at: string;
}

export class ReviewLabelResponse {
  @ApiProperty({ example: '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a53' })
  id: string;
  @ApiProperty({ example: EXAMPLE_ITEM_ID })
  item_id: string;
  @ApiProperty({ example: EXAMPLE_ID.user })
  reviewer_id: string;
  @ApiProperty({ enum: ['label', 'skip'], example: 'label' })
  kind: 'label' | 'skip';
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, example: EXAMPLE_LABEL })
  values: Record<string, unknown> | null;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  reason: string | null;
  @ApiProperty({ example: 1 })
  rubric_version: number;
  /** Every earlier value of the label, oldest first, with who changed it and when */
  @ApiProperty({ type: [LabelChange] })
  history: LabelChange[];
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}

export class AdjudicateRequest {
  /** The final label, validated against the queue's current rubric version */
  @ApiProperty({ type: 'object', additionalProperties: true, example: EXAMPLE_LABEL })
  @IsObject()
  values: Record<string, unknown>;
}

export class DisagreementResponse {
  @ApiProperty({ type: ReviewItemResponse })
  item: ReviewItemResponse;
  @ApiProperty({ type: [ReviewLabelResponse] })
  labels: ReviewLabelResponse[];
}

export class FinalLabelResponse {
  @ApiProperty({ example: EXAMPLE_ITEM_ID })
  item_id: string;
  @ApiProperty({ example: '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a60' })
  ref: string;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  run_id: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, example: EXAMPLE_LABEL })
  values: Record<string, unknown>;
  @ApiProperty({ enum: ['consensus', 'adjudication'], example: 'consensus' })
  source: 'consensus' | 'adjudication';
  @ApiProperty({ example: 1 })
  rubric_version: number;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  finalised_at: Date;
}

export class AgreementQuery {
  /** Seed of the bootstrap intervals over items; absent: no intervals */
  @ApiPropertyOptional({ example: 42 })
  @ValidateIfPresent()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  seed?: number;

  /** Confidence level of the intervals, 0.5..0.999 (default 0.95) */
  @ApiPropertyOptional({ example: 0.95 })
  @ValidateIfPresent()
  @Type(() => Number)
  @IsNumber()
  @Min(0.5)
  @Max(0.999)
  confidence?: number;
}

const ESTIMATE_SCHEMA = {
  type: 'object' as const,
  additionalProperties: true,
  description:
    '{value, interval: {low, high, confidence, resamples, undefined_resamples} | null, reason}: value null with the reason when the data do not define it',
  example: { value: 0.62, interval: { low: 0.41, high: 0.8 }, reason: null },
};

export class ReviewerAgreementResponse {
  @ApiProperty({ example: EXAMPLE_ID.user })
  reviewer_id: string;
  @ApiProperty({ example: 60 })
  labelled: number;
  @ApiProperty(ESTIMATE_SCHEMA)
  with_others: Record<string, unknown>;
  @ApiProperty(ESTIMATE_SCHEMA)
  with_final: Record<string, unknown>;
}

export class FieldAgreementResponse {
  @ApiProperty({ example: 'correct' })
  field: string;
  @ApiProperty({ enum: RUBRIC_FIELD_TYPES, example: 'pass_fail' })
  type: RubricFieldType;
  @ApiProperty({ example: 60 })
  rated_items: number;
  @ApiProperty(ESTIMATE_SCHEMA)
  percent_agreement: Record<string, unknown>;
  @ApiProperty(ESTIMATE_SCHEMA)
  cohens_kappa: Record<string, unknown>;
  @ApiProperty(ESTIMATE_SCHEMA)
  fleiss_kappa: Record<string, unknown>;
  /** By level of measurement: `nominal` for pass/fail and categorical, `interval` and `ordinal` for numeric */
  @ApiProperty({ type: 'object', additionalProperties: true, example: { nominal: ESTIMATE_SCHEMA.example } })
  krippendorff_alpha: Record<string, unknown>;
  @ApiProperty({ type: [ReviewerAgreementResponse] })
  per_reviewer: ReviewerAgreementResponse[];
  @ApiProperty({ example: 7 })
  disagreements: number;
}

export class AgreementResponse {
  @ApiProperty({ example: EXAMPLE_QUEUE_ID })
  queue_id: string;
  @ApiProperty({ example: 60 })
  items: number;
  /** Reviewers who labelled any item */
  @ApiProperty({ example: [EXAMPLE_ID.user] })
  reviewers: string[];
  /** Items in disagreement, awaiting adjudication */
  @ApiProperty({ example: 7 })
  disagreements: number;
  @ApiProperty({ type: 'integer', nullable: true, example: 42 })
  seed: number | null;
  @ApiProperty({ example: 0.95 })
  confidence: number;
  @ApiProperty({ type: [FieldAgreementResponse] })
  fields: FieldAgreementResponse[];
}

export class GroundTruthExportDto {
  /** The free-text rubric field holding each trace's expected output */
  @ApiProperty({ example: 'expected_answer' })
  @IsString()
  @MinLength(1)
  @MaxLength(64)
  expected_output_field: string;

  /** The ground truth's message (default: the queue's name) */
  @ApiPropertyOptional({ example: 'Refund conversations confirmed in review' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  message?: string;
}

export class ReviewExportRequest {
  /** The test-case dataset the labelled items go to as new rows of a new candidate version. Absent (dataset-version and run sources): the label columns are added to the source dataset's rows, in its next version */
  @ApiPropertyOptional({ example: 'confirmed production failures' })
  @ValidateIfPresent()
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  dataset_name?: string;

  /** With `dataset_name`: create the dataset when the workspace has none of that name (default false) */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  create_dataset?: boolean;

  /** A traces queue: the final labels as the trace version's next ground truth (its newest ground truth's items, the queue's label winning for each trace it labelled), instead of a dataset */
  @ApiPropertyOptional({ type: GroundTruthExportDto })
  @ValidateIfPresent()
  @NestedObject(() => GroundTruthExportDto)
  ground_truth?: GroundTruthExportDto;
}

export class ReviewExportResponse {
  @ApiProperty({ example: EXAMPLE_ID.dataset })
  dataset_id: string;
  /** The new candidate version, or null when every final label was exported before */
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_ID.version })
  version_id: string | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 2 })
  version_number: number | null;
  /** Rows written */
  @ApiProperty({ example: 12 })
  rows: number;
  /** Final labels already in the dataset from an earlier export */
  @ApiProperty({ example: 0 })
  already_exported: number;
  /** In place: final labels of rows the source dataset's newest version no longer has; with `ground_truth`: traces labelled without an expected output (and none earlier), left out */
  @ApiProperty({ example: [] })
  missing_rows: string[];
  /** With `ground_truth`: the number of the trace version's new ground truth (dataset_id and version_id are the trace dataset and version) */
  @ApiPropertyOptional({ type: 'integer', example: 2 })
  ground_truth_number?: number;
}

export class ValidateJudgeWithQueueRequest extends JudgeValidationSettings {
  /** A judged metric of the run whose judge is validated */
  @ApiProperty({ example: 'grader' })
  @IsString()
  @MaxLength(100)
  metric: string;

  /** The rubric field holding the human verdict: pass_fail, categorical or numeric */
  @ApiProperty({ example: 'correct' })
  @IsString()
  @MaxLength(64)
  field: string;

  /** The run judged (a dataset-version queue names it; a run queue defaults to its run). It must be over the queue's dataset version */
  @ApiPropertyOptional({ format: 'uuid', example: EXAMPLE_ID.run })
  @ValidateIfPresent()
  @IsUUID()
  run_id?: string;

  /** The values of the field meaning pass (compared as text, case-insensitively; at most 50); without it, true and pass words pass, and a number on a numeric judge scale passes as the judge's threshold would */
  @ApiPropertyOptional({ type: 'array', items: LABEL_VALUE_SCHEMA, example: ['warm'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @IsLabelValue({ each: true })
  positive?: LabelValue[];
}
