import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsUUID } from 'class-validator';
import { PageQueryDto } from '#libs/common/pagination.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';

// Values the examples below share.
const EXAMPLE_VALIDATION_ID = '6a0f3c1e-2b4d-4f8a-9c7e-1d2e3f4a5b6c';
const EXAMPLE_CANDIDATE_ID = '7b1a4d2f-3c5e-4a9b-8d0f-2e3f4a5b6c7d';
const EXAMPLE_RATE = { value: 0.8, successes: 20, trials: 25, interval: { low: 0.609, high: 0.911 }, reason: null };
const EXAMPLE_KAPPA = { value: 0.4, interval: { low: 0.138, high: 0.64 }, reason: null };
const EXAMPLE_CONFUSION = { true_positive: 20, false_positive: 10, true_negative: 15, false_negative: 5, items: 50 };

export class ListJudgeValidationsQuery extends PageQueryDto {
  /** The workspace the metric config belongs to */
  @IsUUID()
  workspace_id: string;
}

@ApiSchemaExample({ base_validation_id: EXAMPLE_VALIDATION_ID, candidate_validation_id: EXAMPLE_CANDIDATE_ID })
export class CompareJudgeValidationsRequest {
  /** The validation of the judge to compare with (say, the rubric's current version) */
  @ApiProperty({ format: 'uuid', example: EXAMPLE_VALIDATION_ID })
  @IsUUID()
  base_validation_id: string;

  /** The validation of the other judge (say, a new rubric version), on overlapping items */
  @ApiProperty({ format: 'uuid', example: EXAMPLE_CANDIDATE_ID })
  @IsUUID()
  candidate_validation_id: string;
}

export class IntervalResponse {
  @ApiProperty({ example: 0.609 })
  low: number;
  @ApiProperty({ example: 0.911 })
  high: number;
}

/** A share with its Wilson score interval, or null and why. */
@ApiSchemaExample(EXAMPLE_RATE)
export class RateFigureResponse {
  @ApiProperty({ type: 'number', nullable: true, example: 0.8 })
  value: number | null;
  @ApiProperty({ type: 'integer', example: 20 })
  successes: number;
  @ApiProperty({ type: 'integer', example: 25 })
  trials: number;
  @ApiProperty({ type: () => IntervalResponse, nullable: true })
  interval: IntervalResponse | null;
  /** Why there is no value (no item of the kind) */
  @ApiProperty({ type: 'string', nullable: true, example: null })
  reason: string | null;
}

/** A statistic with its seeded percentile bootstrap interval over items, or null and why. */
@ApiSchemaExample(EXAMPLE_KAPPA)
export class EstimateFigureResponse {
  @ApiProperty({ type: 'number', nullable: true, example: 0.4 })
  value: number | null;
  @ApiProperty({ type: () => IntervalResponse, nullable: true })
  interval: IntervalResponse | null;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  reason: string | null;
}

/** The judge against humans on the items both labelled; a pass is the positive class. */
@ApiSchemaExample(EXAMPLE_CONFUSION)
export class ConfusionMatrixResponse {
  /** Both passed */
  @ApiProperty({ type: 'integer', example: 20 })
  true_positive: number;
  /** The judge passed what humans failed */
  @ApiProperty({ type: 'integer', example: 10 })
  false_positive: number;
  /** Both failed */
  @ApiProperty({ type: 'integer', example: 15 })
  true_negative: number;
  /** The judge failed what humans passed */
  @ApiProperty({ type: 'integer', example: 5 })
  false_negative: number;
  /** Items with both a judge verdict and a human label */
  @ApiProperty({ type: 'integer', example: 50 })
  items: number;
}

export class ValidityGroupResponse {
  /** The dimension value (`(none)` for rows without one) */
  @ApiProperty({ example: 'billing' })
  value: string;
  confusion: ConfusionMatrixResponse;
  true_positive_rate: RateFigureResponse;
  true_negative_rate: RateFigureResponse;
  accuracy: RateFigureResponse;
  kappa: EstimateFigureResponse;
}

export class ValidityByDimensionResponse {
  @ApiProperty({ example: 'topic' })
  dimension: string;
  @ApiProperty({ type: [ValidityGroupResponse] })
  groups: ValidityGroupResponse[];
}

/** Numeric scales: the judge's raw scores against the human scores. */
export class ScoreValidityResponse {
  @ApiProperty({ type: 'integer', example: 50 })
  items: number;
  /** Spearman's rank correlation (ties averaged) */
  spearman: EstimateFigureResponse;
  /** Mean |judge − human| in the scale's units */
  mean_absolute_error: EstimateFigureResponse;
}

/** How far the human reviewers agree with each other: the ceiling a judge can reach. */
export class HumanAgreementResponse {
  @ApiProperty({ type: 'integer', example: 3 })
  reviewers: number;
  /** Items labelled by at least two reviewers */
  @ApiProperty({ type: 'integer', example: 50 })
  items: number;
  fleiss_kappa: EstimateFigureResponse;
  percent_agreement: EstimateFigureResponse;
}

export class JudgeValidationResultResponse {
  /** Confidence level of every interval */
  @ApiProperty({ example: 0.95 })
  level: number;
  confusion: ConfusionMatrixResponse;
  /** Sensitivity: of the items humans passed, the share the judge passed (Wilson interval) */
  true_positive_rate: RateFigureResponse;
  /** Specificity: of the items humans failed, the share the judge failed (Wilson interval) */
  true_negative_rate: RateFigureResponse;
  accuracy: RateFigureResponse;
  /** Cohen's kappa of the judge against humans (percentile bootstrap interval, seeded) */
  kappa: EstimateFigureResponse;
  @ApiProperty({ type: () => ScoreValidityResponse, nullable: true })
  scores: ScoreValidityResponse | null;
  @ApiProperty({ type: () => ValidityByDimensionResponse, nullable: true })
  by_dimension: ValidityByDimensionResponse | null;
  @ApiProperty({ type: () => HumanAgreementResponse, nullable: true })
  human_agreement: HumanAgreementResponse | null;
}

export class JudgeValidationSourceResponse {
  /** The run whose judge verdicts were validated (null for `review_judge_run`: the judge was asked on the queue's items) */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.run })
  run_id: string | null;
  /** `field`: a column of the run's rows held the human label; `labels`: the labels were handed in; `review_queue`: a review queue's final labels against a run's verdicts; `review_judge_run`: the judge was applied to a review queue's finally labelled items */
  @ApiProperty({ enum: ['field', 'labels', 'review_queue', 'review_judge_run'], example: 'field' })
  kind: 'field' | 'labels' | 'review_queue' | 'review_judge_run';
  /** The column of the rows (`field`) or the queue's rubric field (`review_queue`, `review_judge_run`) */
  @ApiProperty({ type: 'string', nullable: true, example: 'human_verdict' })
  field: string | null;
  /** With `review_queue` and `review_judge_run`: the review queue whose final labels were the human labels */
  @ApiPropertyOptional({ format: 'uuid', example: '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a51' })
  queue_id?: string;
  /** With `review_queue` and `review_judge_run`: the queue's rubric version */
  @ApiPropertyOptional({ type: 'integer', example: 1 })
  rubric_version?: number;
  /** With `review_judge_run`: the judge run (GET /review-queues/{queue_id}/judge-runs/{judge_run_id}) */
  @ApiPropertyOptional({ format: 'uuid', example: '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a61' })
  judge_run_id?: string;
  /** A row repeated in the run counts with its first repetition */
  @ApiProperty({ enum: ['first'], example: 'first' })
  repetition: 'first';
  /** Rows with a judge verdict and no human label */
  @ApiProperty({ type: 'integer', example: 0 })
  unlabelled_rows: number;
  /** Human labels of rows the run does not have */
  @ApiProperty({ type: 'integer', example: 0 })
  unmatched_labels: number;
}

/** One item of a validation: the judge's verdict and score beside the human label. */
export class JudgePairResponse {
  /** The run row's id */
  @ApiProperty({ example: 'row-17' })
  item: string;
  @ApiProperty({ type: 'boolean', nullable: true, example: true })
  judge_passed: boolean | null;
  @ApiProperty({ type: 'number', nullable: true, example: 4 })
  judge_score: number | null;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  judge_label: string | null;
  @ApiProperty({ type: 'boolean', nullable: true, example: false })
  human_passed: boolean | null;
  @ApiProperty({ type: 'number', nullable: true, example: null })
  human_score: number | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', nullable: true },
    example: { topic: 'billing' },
  })
  dimensions: Record<string, string | null>;
  /** Each reviewer's verdict, when several labelled the item */
  @ApiProperty({ type: 'array', items: { type: 'boolean', nullable: true }, required: false, example: [true, true] })
  reviews?: Array<boolean | null>;
}

/** A validation without its pairs (lists). */
export class JudgeValidationSummary {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_VALIDATION_ID })
  id: string;
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.workspace })
  workspace_id: string;
  /** The metric config version validated */
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.metricConfig })
  metric_config_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  config_name: string;
  @ApiProperty({ type: 'integer', example: 2 })
  config_version: number;
  /** The metric's name in the run */
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  metric: string;
  source: JudgeValidationSourceResponse;
  /** Seed of the bootstrap intervals: the same pairs and seed give the same figures */
  @ApiProperty({ type: 'integer', example: 1 })
  seed: number;
  /** Pairs kept with the validation */
  @ApiProperty({ type: 'integer', example: 50 })
  items: number;
  result: JudgeValidationResultResponse;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

/** A validation with the per-item pairs it was computed from. */
export class JudgeValidationResponse extends JudgeValidationSummary {
  @ApiProperty({ type: [JudgePairResponse] })
  pairs: JudgePairResponse[];
}

export class ValidationRefResponse {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_VALIDATION_ID })
  id: string;
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  config_name: string;
  @ApiProperty({ type: 'integer', example: 2 })
  config_version: number;
}

export class McNemarResponse {
  /** McNemar's exact test, two-sided */
  @ApiProperty({ enum: ['mcnemar_exact'], example: 'mcnemar_exact' })
  test: string;
  @ApiProperty({ enum: ['exact'], example: 'exact' })
  method: string;
  /** The smaller of the two counts of items exactly one judge got right */
  @ApiProperty({ example: 0 })
  statistic: number;
  @ApiProperty({ example: 0.031 })
  p_value: number;
  /** Items exactly one judge got right */
  @ApiProperty({ type: 'integer', example: 6 })
  informative: number;
}

/** Two judges on the items both validations hold: each one's accuracy and McNemar's exact test. */
export class JudgeValidationComparisonResponse {
  base: ValidationRefResponse;
  candidate: ValidationRefResponse;
  /** Items both validations hold */
  @ApiProperty({ type: 'integer', example: 50 })
  shared_items: number;
  /** Shared items whose human labels differ between the two: left out */
  @ApiProperty({ type: 'integer', example: 0 })
  human_label_conflicts: number;
  /** Items compared: both verdicts and a human label */
  @ApiProperty({ type: 'integer', example: 50 })
  items: number;
  accuracy_base: RateFigureResponse;
  accuracy_candidate: RateFigureResponse;
  /** Items the base judge got right and the candidate wrong */
  @ApiProperty({ type: 'integer', example: 0 })
  only_base_correct: number;
  /** Items the candidate got right and the base wrong */
  @ApiProperty({ type: 'integer', example: 6 })
  only_candidate_correct: number;
  /** Accuracy of the candidate − accuracy of the base */
  @ApiProperty({ type: 'number', nullable: true, example: 0.12 })
  difference: number | null;
  mcnemar: McNemarResponse;
  /** Whether the difference is significant at 0.05 */
  @ApiProperty({ example: true })
  significant: boolean;
}
