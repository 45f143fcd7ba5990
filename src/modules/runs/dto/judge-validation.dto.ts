import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsInt,
  IsNumber,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  type ValidationOptions,
} from 'class-validator';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';
import { ApiSchemaExample, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { NestedObject } from '#libs/common/record-validators.js';
import { MAX_REVIEWERS, MAX_VALIDATION_PAIRS } from '#libs/evaluation/judge-validation.js';

/** A human label: text, a number or true/false. */
export type LabelValue = string | number | boolean;

const isLabelValue = (v: unknown) =>
  typeof v === 'boolean' || (typeof v === 'string' && v.length <= 200) || (typeof v === 'number' && Number.isFinite(v));

/** A label value: a string of at most 200 characters, a finite number or a boolean (each, with `each`). */
export function IsLabelValue(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isLabelValue',
      validator: {
        validate: (value: unknown) => isLabelValue(value),
        defaultMessage: () => '$property must be a string (at most 200 characters), a finite number or a boolean',
      },
    },
    options,
  );
}

const COLUMN = /^[A-Za-z_][A-Za-z0-9_ .-]{0,99}$/;
export const LABEL_VALUE_SCHEMA = {
  oneOf: [{ type: 'string', maxLength: 200 }, { type: 'number' }, { type: 'boolean' }],
};

export class HumanLabelDto {
  /** A row of the run */
  @ApiProperty({ example: 'row-17' })
  @IsString()
  @MaxLength(200)
  row_id: string;

  /** The final human label of the row */
  @ApiProperty({ ...LABEL_VALUE_SCHEMA, example: 'pass' })
  @IsLabelValue()
  value: LabelValue;

  /** Each reviewer's label, when several reviewed the row (their agreement is the ceiling; at most 10) */
  @ApiPropertyOptional({
    maxItems: MAX_REVIEWERS,
    type: 'array',
    items: LABEL_VALUE_SCHEMA,
    example: ['pass', 'pass', 'fail'],
  })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(MAX_REVIEWERS)
  @IsLabelValue({ each: true })
  reviews?: LabelValue[];
}

/** Where the human labels are: a column of the run's rows, or labels handed in (exactly one). */
export class HumanLabelsSourceDto {
  /** A column of the rows' data holding the human label (e.g. `human_verdict`) */
  @ApiPropertyOptional({ example: 'human_verdict' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(100)
  @Matches(COLUMN, { message: 'field must be a column name (1..100 letters, digits, spaces or _ . -)' })
  field?: string;

  /** Other columns holding other reviewers' labels of the same rows (with `field`; at most 9) */
  @ApiPropertyOptional({ maxItems: MAX_REVIEWERS - 1, type: [String], example: ['reviewer_b'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(MAX_REVIEWERS - 1)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  @Matches(COLUMN, { each: true, message: 'reviewer_fields must be column names' })
  reviewer_fields?: string[];

  /** Labels per row (at most 10,000) */
  @ApiPropertyOptional({ maxItems: MAX_VALIDATION_PAIRS, type: [HumanLabelDto] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_VALIDATION_PAIRS)
  @NestedObject(() => HumanLabelDto, { each: true })
  labels?: HumanLabelDto[];

  /**
   * The values meaning pass (compared as text, case-insensitively; at most 50). Without it: true,
   * `pass`, `passed`, `yes`, `true`, `1` pass and false, `fail`, `failed`, `no`, `false`, `0` fail;
   * a number on a numeric judge scale passes as the judge's threshold would pass it.
   */
  @ApiPropertyOptional({ type: 'array', items: LABEL_VALUE_SCHEMA, example: ['pass', 'good'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @IsLabelValue({ each: true })
  positive?: LabelValue[];
}

/** The figures' settings of a validation: a breakdown, the intervals' level and the bootstrap's seed. */
export class JudgeValidationSettings {
  /** A dimension of the rows to break the figures down by */
  @ApiPropertyOptional({ example: 'topic' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(64)
  by_dimension?: string;

  /** Confidence level of the intervals, 0.5..0.999 (default 0.95) */
  @ApiPropertyOptional({ example: 0.95 })
  @ValidateIfPresent()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.5)
  @Max(0.999)
  confidence?: number;

  /** Seed of the bootstrap intervals (default 1): the same labels and seed give the same figures */
  @ApiPropertyOptional({ example: 1 })
  @ValidateIfPresent()
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  seed?: number;
}

@ApiSchemaExample({
  metric: EXAMPLE_NAME.metricConfig,
  human: { field: 'human_verdict', positive: ['pass'] },
  by_dimension: 'topic',
  confidence: 0.95,
  seed: 1,
})
export class CreateJudgeValidationRequest extends JudgeValidationSettings {
  /** A judged metric of the run whose config version is validated */
  @ApiProperty({ example: EXAMPLE_NAME.metricConfig })
  @IsString()
  @MaxLength(100)
  metric: string;

  @NestedObject(() => HumanLabelsSourceDto)
  human: HumanLabelsSourceDto;
}

export class CorrectedIntervalResponse {
  @ApiProperty({ example: 0.34 })
  low: number;
  @ApiProperty({ example: 0.89 })
  high: number;
}

/** A judged metric's pass rate corrected for its judge's validated errors (Rogan-Gladen, Lang-Reiczigel interval). */
@ApiSchemaExample({
  pass_rate: 0.6,
  observed: 0.65,
  interval: { low: 0.34, high: 0.89 },
  level: 0.95,
  method: 'rogan_gladen_lang_reiczigel',
  clipped: 'none',
  validation_id: '6a0f3c1e-2b4d-4f8a-9c7e-1d2e3f4a5b6c',
  sensitivity: 0.8333,
  specificity: 0.625,
  reason: null,
})
export class CorrectedPassRateResponse {
  /** The corrected estimate; null with `reason` when the judge or the validation cannot give one */
  @ApiProperty({ type: 'number', nullable: true, example: 0.6 })
  pass_rate: number | null;
  /** The pass rate as the judge gave it, over the same rows */
  @ApiProperty({ type: 'number', nullable: true, example: 0.65 })
  observed: number | null;
  @ApiProperty({ type: () => CorrectedIntervalResponse, nullable: true })
  interval: CorrectedIntervalResponse | null;
  @ApiProperty({ example: 0.95 })
  level: number;
  @ApiProperty({ enum: ['rogan_gladen_lang_reiczigel'], example: 'rogan_gladen_lang_reiczigel' })
  method: string;
  /** `to_zero` / `to_one`: the estimate fell outside 0..1 and was set to its bound */
  @ApiProperty({ type: 'string', enum: ['none', 'to_zero', 'to_one'], nullable: true, example: 'none' })
  clipped: string | null;
  /** The validation (the newest of the config version the run used) */
  @ApiProperty({ format: 'uuid', example: '6a0f3c1e-2b4d-4f8a-9c7e-1d2e3f4a5b6c' })
  validation_id: string;
  @ApiProperty({ type: 'number', nullable: true, example: 0.8333 })
  sensitivity: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: 0.625 })
  specificity: number | null;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  reason: string | null;
}
