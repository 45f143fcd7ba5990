import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsNumber,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID } from '#libs/common/openapi-examples.js';
import { NestedObject } from '#libs/common/record-validators.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';

/** A stable example id of an evaluator, an alert rule and an alert event. */
export const EXAMPLE_EVALUATOR_ID = '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4b01';
export const EXAMPLE_ALERT_RULE_ID = '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4b11';
const EXAMPLE_ALERT_EVENT_ID = '0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4b21';

/** The kinds of rule: `pass_rate` compares the share of scores that passed (the mean of numeric scores is not offered yet). */
export const ALERT_RULE_KINDS = ['pass_rate'] as const;
export const REFERENCE_KINDS = ['trailing', 'fixed'] as const;
/** The longest window (recent or trailing reference), in seconds: 366 days. */
const MAX_WINDOW_SECONDS = 366 * 24 * 3600;

/** The reference the recent window is compared with. */
export class AlertReferenceDto {
  /** `trailing`: the `seconds` right before the recent window; `fixed`: the baseline window [`from`, `to`) */
  @ApiProperty({ enum: REFERENCE_KINDS, example: 'trailing' })
  @IsIn(REFERENCE_KINDS)
  kind: 'trailing' | 'fixed';

  /** Length of a trailing reference, 60 s .. 366 days */
  @ApiPropertyOptional({ type: 'integer', example: 86400 })
  @ValidateIfPresent()
  @IsInt()
  @Min(60)
  @Max(MAX_WINDOW_SECONDS)
  seconds?: number;

  /** Start of a fixed reference (inclusive), an ISO 8601 date-time */
  @ApiPropertyOptional({ type: 'string', format: 'date-time', example: '2026-11-01T00:00:00.000Z' })
  @ValidateIfPresent()
  @MaxLength(64)
  @IsISO8601({ strict: true, strictSeparator: true }, { message: 'reference.from must be an ISO 8601 date-time' })
  from?: string;

  /** End of a fixed reference (exclusive), an ISO 8601 date-time after `from` */
  @ApiPropertyOptional({ type: 'string', format: 'date-time', example: '2026-11-08T00:00:00.000Z' })
  @ValidateIfPresent()
  @MaxLength(64)
  @IsISO8601({ strict: true, strictSeparator: true }, { message: 'reference.to must be an ISO 8601 date-time' })
  to?: string;
}

const EXAMPLE_RULE = {
  name: 'helpfulness drop',
  metric: 'helpfulness',
  recent_seconds: 3600,
  reference: { kind: 'trailing', seconds: 86400 },
  min_samples: 100,
  min_drop: 0.05,
};

/** A rule's statistics and schedule, each with its default. */
export class AlertRuleSettings {
  @ApiPropertyOptional({ example: 'Pages when helpfulness falls against the last day' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  /** What is compared: `pass_rate`, the share of scores that passed (default) */
  @ApiPropertyOptional({ enum: ALERT_RULE_KINDS, example: 'pass_rate' })
  @ValidateIfPresent()
  @IsIn(ALERT_RULE_KINDS, { message: "kind must be 'pass_rate' (the mean of numeric scores is not offered yet)" })
  kind?: 'pass_rate';

  /** Length of the recent window, 60 s .. 366 days (default 3600) */
  @ApiPropertyOptional({ type: 'integer', example: 3600 })
  @ValidateIfPresent()
  @IsInt()
  @Min(60)
  @Max(MAX_WINDOW_SECONDS)
  recent_seconds?: number;

  /** The reference window (default: the trailing 24 hours before the recent window) */
  @ApiPropertyOptional({ type: () => AlertReferenceDto })
  @ValidateIfPresent()
  @NestedObject(() => AlertReferenceDto)
  reference?: AlertReferenceDto;

  /** A check breaches when the one-sided p-value is below it, 0.0001..0.5 (default 0.05) */
  @ApiPropertyOptional({ example: 0.05 })
  @ValidateIfPresent()
  @IsNumber()
  @Min(0.0001)
  @Max(0.5)
  alpha?: number;

  /** A check is calm when the p-value is at least this, above alpha, up to 1 (default 0.2) */
  @ApiPropertyOptional({ example: 0.2 })
  @ValidateIfPresent()
  @IsNumber()
  @Min(0.0002)
  @Max(1)
  alpha_resolve?: number;

  /** Fewer scores with a verdict in either window give no verdict, 1..1,000,000 (default 100) */
  @ApiPropertyOptional({ type: 'integer', example: 100 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  min_samples?: number;

  /** The smallest drop of the pass rate (0..1) that can fire, however significant a smaller one (default 0.03) */
  @ApiPropertyOptional({ example: 0.05 })
  @ValidateIfPresent()
  @IsNumber()
  @Min(0)
  @Max(1)
  min_drop?: number;

  /** Breaches in a row that fire the alert, 1..100 (default 3) */
  @ApiPropertyOptional({ type: 'integer', example: 3 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(100)
  fire_after?: number;

  /** Calm checks in a row that resolve it, 1..100 (default 3) */
  @ApiPropertyOptional({ type: 'integer', example: 3 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(100)
  resolve_after?: number;

  /** How often the rule is checked, 10 s .. 1 day (default 300) */
  @ApiPropertyOptional({ type: 'integer', example: 300 })
  @ValidateIfPresent()
  @IsInt()
  @Min(10)
  @Max(86400)
  check_seconds?: number;

  /** A disabled rule is not checked on its schedule (default true) */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  enabled?: boolean;
}

@ApiSchemaExample(EXAMPLE_RULE)
export class CreateAlertRuleRequest extends AlertRuleSettings {
  /** 1..200 characters, unique among the evaluator's rules */
  @ApiProperty({ example: EXAMPLE_RULE.name })
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  /** The metric of the evaluator's scores the rule watches */
  @ApiProperty({ example: EXAMPLE_RULE.metric })
  @IsString()
  @MaxLength(200)
  @Matches(/^[A-Za-z0-9_.:-]{1,200}$/, { message: 'metric must be a metric name' })
  metric: string;
}

/** A change of a rule: the members sent. A change of the statistics (all but name, description, check_seconds and enabled) starts the alert again from ok. */
@ApiSchemaExample({ min_drop: 0.1, fire_after: 2 })
export class UpdateAlertRuleRequest extends AlertRuleSettings {
  /** 1..200 characters, unique among the evaluator's rules */
  @ApiPropertyOptional({ example: EXAMPLE_RULE.name })
  @ValidateIfPresent()
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;

  /** The metric of the evaluator's scores the rule watches */
  @ApiPropertyOptional({ example: EXAMPLE_RULE.metric })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  @Matches(/^[A-Za-z0-9_.:-]{1,200}$/, { message: 'metric must be a metric name' })
  metric?: string;
}

/** A share's interval, or a difference's. */
export class IntervalDto {
  @ApiProperty({ example: -0.159 })
  low: number;
  @ApiProperty({ example: -0.04 })
  high: number;
}

/** The reference window as a rule holds it. */
export class AlertReferenceResponse {
  @ApiProperty({ enum: REFERENCE_KINDS, example: 'trailing' })
  kind: string;
  /** A trailing reference's length */
  @ApiProperty({ type: 'integer', nullable: true, example: 86400 })
  seconds: number | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  from: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  to: string | null;
}

/** One window of a check: its bounds, counts and pass rate. */
export class AlertWindowEvidence {
  /** Scores observed from (inclusive) */
  @ApiProperty({ format: 'date-time', example: '2026-11-29T09:00:00.000Z' })
  from: string;
  /** … to (exclusive) */
  @ApiProperty({ format: 'date-time', example: '2026-11-29T10:00:00.000Z' })
  to: string;
  /** Scores that passed */
  @ApiProperty({ type: 'integer', example: 280 })
  passes: number;
  /** Scores with a pass verdict (passed or failed) */
  @ApiProperty({ type: 'integer', example: 400 })
  trials: number;
  /** Scoring errors in the window (not counted in trials) */
  @ApiProperty({ type: 'integer', example: 2 })
  errored: number;
  /** passes / trials, null without trials */
  @ApiProperty({ type: 'number', nullable: true, example: 0.7 })
  rate: number | null;
  /** The rate's Wilson interval (95%), null without a verdict */
  @ApiProperty({ type: () => IntervalDto, nullable: true })
  interval: IntervalDto | null;
}

/** The recent rate minus the reference rate, with Newcombe's hybrid score interval (95%). */
export class AlertDifference {
  @ApiProperty({ example: -0.1 })
  value: number;
  @ApiProperty({ type: () => IntervalDto })
  interval: IntervalDto;
}

/** The alert's state. */
export class AlertStateDto {
  @ApiProperty({ enum: ['ok', 'firing'], example: 'ok' })
  status: string;
  /** Breaches in a row so far (while ok) */
  @ApiProperty({ type: 'integer', example: 1 })
  breaches: number;
  /** Calm checks in a row so far (while firing) */
  @ApiProperty({ type: 'integer', example: 0 })
  calms: number;
}

/** One check: the verdict, the test and its figures, both windows, and the alert's state after it. */
export class AlertEvaluationResponse {
  @ApiProperty({ format: 'date-time', example: '2026-11-29T10:00:00.000Z' })
  checked_at: string;
  /** `breach` (p < alpha and a drop of at least min_drop), `calm` (p >= alpha_resolve), `inconclusive`, or `no_verdict` (too few scores) */
  @ApiProperty({ enum: ['breach', 'calm', 'inconclusive', 'no_verdict'], example: 'breach' })
  verdict: string;
  /** Why there is no verdict: which window has fewer than min_samples scores */
  @ApiProperty({ type: 'string', nullable: true, example: null })
  reason: string | null;
  /** `fisher_exact` when a cell of the 2x2 table expects fewer than 5, else `two_proportion_z` */
  @ApiProperty({
    type: 'string',
    enum: ['fisher_exact', 'two_proportion_z'],
    nullable: true,
    example: 'two_proportion_z',
  })
  test: string | null;
  /** One-sided: the chance of a recent rate this low if both windows had the same rate */
  @ApiProperty({ type: 'number', nullable: true, example: 0.00055 })
  p_value: number | null;
  @ApiProperty({ type: () => AlertDifference, nullable: true })
  difference: AlertDifference | null;
  @ApiProperty({ type: () => AlertWindowEvidence })
  recent: AlertWindowEvidence;
  @ApiProperty({ type: () => AlertWindowEvidence })
  reference: AlertWindowEvidence;
  /** The alert after this check */
  @ApiProperty({ type: () => AlertStateDto })
  state: AlertStateDto;
}

/** An alert rule on an evaluator's metric, with its settings and its alert's state. */
export class AlertRuleResponse {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ALERT_RULE_ID })
  id: string;
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ format: 'uuid', example: EXAMPLE_EVALUATOR_ID })
  evaluator_id: string;
  @ApiProperty({ example: EXAMPLE_RULE.name })
  name: string;
  @ApiProperty({ example: '' })
  description: string;
  @ApiProperty({ example: EXAMPLE_RULE.metric })
  metric: string;
  @ApiProperty({ enum: ALERT_RULE_KINDS, example: 'pass_rate' })
  kind: string;
  @ApiProperty({ type: 'integer', example: 3600 })
  recent_seconds: number;
  @ApiProperty({ type: () => AlertReferenceResponse })
  reference: AlertReferenceResponse;
  @ApiProperty({ example: 0.05 })
  alpha: number;
  @ApiProperty({ example: 0.2 })
  alpha_resolve: number;
  @ApiProperty({ type: 'integer', example: 100 })
  min_samples: number;
  @ApiProperty({ example: 0.05 })
  min_drop: number;
  @ApiProperty({ type: 'integer', example: 3 })
  fire_after: number;
  @ApiProperty({ type: 'integer', example: 3 })
  resolve_after: number;
  @ApiProperty({ type: 'integer', example: 300 })
  check_seconds: number;
  @ApiProperty({ example: true })
  enabled: boolean;
  /** `ok` or `firing` */
  @ApiProperty({ enum: ['ok', 'firing'], example: 'ok' })
  status: string;
  /** Breaches in a row so far (while ok) */
  @ApiProperty({ type: 'integer', example: 0 })
  breaches: number;
  /** Calm checks in a row so far (while firing) */
  @ApiProperty({ type: 'integer', example: 0 })
  calms: number;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.updated })
  last_checked_at: Date | null;
  /** The last check's evaluation; null before the first check and after a change of the statistics */
  @ApiProperty({ type: () => AlertEvaluationResponse, nullable: true })
  last_evaluation: AlertEvaluationResponse | null;
  /** When the alert last fired */
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  fired_at: Date | null;
  /** When it last resolved */
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  resolved_at: Date | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}

/** What checking a rule now found. */
export class AlertCheckResponse {
  @ApiProperty({ type: () => AlertEvaluationResponse })
  evaluation: AlertEvaluationResponse;
  /** `firing` when this check fired the alert, `resolved` when it resolved it, else null */
  @ApiProperty({ type: 'string', enum: ['firing', 'resolved'], nullable: true, example: 'firing' })
  transition: string | null;
  /** The rule with its state after the check */
  @ApiProperty({ type: () => AlertRuleResponse })
  rule: AlertRuleResponse;
}

/** A low-scoring trace of the recent window, as an example of a drop. */
export class AlertExample {
  @ApiProperty({ type: 'string', nullable: true, example: '4bf92f3577b34da6a3ce929d0e0e4736' })
  trace_id: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  span_id: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  session_id: string | null;
  @ApiProperty({ type: 'number', nullable: true, example: 0.2 })
  score: number | null;
  @ApiProperty({ type: 'boolean', nullable: true, example: false })
  passed: boolean | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'the answer ignores the question' })
  reason: string | null;
  @ApiProperty({ format: 'date-time', example: '2026-11-29T09:41:07.000Z' })
  observed_at: string;
}

/** A firing or a resolution of a rule's alert, with the evaluation that moved it. */
export class AlertEventResponse {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ALERT_EVENT_ID })
  id: string;
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ALERT_RULE_ID })
  rule_id: string;
  @ApiProperty({ format: 'uuid', example: EXAMPLE_EVALUATOR_ID })
  evaluator_id: string;
  @ApiProperty({ enum: ['firing', 'resolved'], example: 'firing' })
  kind: string;
  @ApiProperty({ type: () => AlertEvaluationResponse })
  evaluation: AlertEvaluationResponse;
  /** Up to 5 of the recent window's lowest scores (failures first) */
  @ApiProperty({ type: [AlertExample] })
  examples: AlertExample[];
  /** Webhook deliveries queued for it (one per notification config subscribed to the event) */
  @ApiProperty({ type: 'integer', example: 1 })
  deliveries: number;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  created_at: Date;
}
