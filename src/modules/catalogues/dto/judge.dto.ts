import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsString,
  IsUrl,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { PageQueryDto } from '#libs/common/pagination.js';
import { IsBoundedJson, NestedObject } from '#libs/common/record-validators.js';
import { JUDGE_PROVIDERS, type JudgeProvider } from '#libs/evaluation/judges/judge.types.js';
import { catalogueEntryRequest } from './catalogue-entry.dto.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';

// Values the examples below share.
const EXAMPLE_DESCRIPTION = 'Grades answers for correctness and faithfulness';

/** The rubric of the examples: the example judge grading correctness on 1 to 5. */
export const EXAMPLE_RUBRIC =
  'Grade how well the answer matches the reference.\nQuestion: {{input}}\nAnswer: {{output}}\nReference: {{expected_output}}\n1 = wrong or missing, 5 = correct and complete.';

const url = { require_protocol: true, protocols: ['http', 'https'], require_tld: false };

export class ListJudgesQuery extends PageQueryDto {
  @IsUUID()
  workspace_id: string;

  @ApiPropertyOptional({ enum: JUDGE_PROVIDERS })
  @ValidateIfPresent()
  @IsIn(JUDGE_PROVIDERS)
  provider?: JudgeProvider;
}

/** A judge's optional settings, shared by create and update. */
class JudgeTuning {
  /** azure_openai: the API version (default 2024-10-21) */
  @ApiPropertyOptional({ type: 'string', nullable: true, example: '2024-10-21' })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @MaxLength(18)
  @Matches(/^\d{4}-\d{2}-\d{2}(-preview)?$/)
  api_version?: string | null;

  /** Sent with every call: temperature, max_tokens, top_p, seed… (temperature 0 is advised for grading) */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { temperature: 0, max_tokens: 512 } })
  @ValidateIfPresent()
  @IsObject()
  @IsBoundedJson(16_000)
  parameters?: Record<string, unknown>;

  /** Ask for a JSON answer where the provider supports it (default true) */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  json_mode?: boolean;

  /** Per attempt, 1000..600000 ms (default 60000) */
  @ApiPropertyOptional({ example: 60000 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1000)
  @Max(600_000)
  timeout_ms?: number;

  /** Attempts in all on 429, 5xx and timeouts, 1..10 (default 3) */
  @ApiPropertyOptional({ example: 3 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(10)
  max_attempts?: number;

  /** Grading calls a run keeps in flight at most, 1..128 (default 4) */
  @ApiPropertyOptional({ example: 4 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(128)
  max_concurrency?: number;

  /** The workspace secret holding the API key (admins); null removes it */
  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.secret })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @IsUUID()
  secret_id?: string | null;
}

@ApiSchemaExample({
  workspace_id: EXAMPLE_ID.workspace,
  name: EXAMPLE_NAME.judge,
  description: EXAMPLE_DESCRIPTION,
  provider: 'openai_compatible',
  base_url: 'https://api.openai.com/v1',
  model: 'gpt-4o-mini',
  parameters: { temperature: 0, max_tokens: 512 },
  json_mode: true,
  timeout_ms: 60000,
  max_attempts: 3,
  max_concurrency: 4,
  secret_id: EXAMPLE_ID.secret,
})
export class CreateJudgeRequest extends IntersectionType(
  catalogueEntryRequest({ creator: 'member', name: EXAMPLE_NAME.judge, description: EXAMPLE_DESCRIPTION }),
  JudgeTuning,
) {
  @ApiProperty({ enum: JUDGE_PROVIDERS, example: 'openai_compatible' })
  @IsIn(JUDGE_PROVIDERS)
  provider: JudgeProvider;

  /** The API root: https://api.openai.com/v1 (openai_compatible), https://<resource>.openai.azure.com (azure_openai), https://api.anthropic.com (anthropic) */
  @ApiProperty({ example: 'https://api.openai.com/v1' })
  @IsUrl(url)
  @MaxLength(2000)
  base_url: string;

  /** The model, or for azure_openai the deployment name */
  @ApiProperty({ example: 'gpt-4o-mini' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  model: string;
}

@ApiSchemaExample({ model: 'gpt-4o', parameters: { temperature: 0, max_tokens: 1024 }, max_concurrency: 8 })
export class UpdateJudgeRequest extends JudgeTuning {
  @ApiPropertyOptional({ example: 'https://api.openai.com/v1' })
  @ValidateIfPresent()
  @IsUrl(url)
  @MaxLength(2000)
  base_url?: string;

  @ApiPropertyOptional({ example: 'gpt-4o' })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  model?: string;

  @ApiPropertyOptional({ example: EXAMPLE_NAME.judge })
  @ValidateIfPresent()
  @Trim()
  @IsString()
  @MaxLength(100)
  @Matches(/^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$/)
  name?: string;

  @ApiPropertyOptional({ example: EXAMPLE_DESCRIPTION })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;
}

@ApiSchemaExample({ type: 'numeric', min: 1, max: 5 })
export class ScaleDto {
  /** `numeric` ({min, max}) or `labels` ({labels, scores?}) */
  @ApiProperty({ enum: ['numeric', 'labels'], example: 'numeric' })
  @IsIn(['numeric', 'labels'])
  type: 'numeric' | 'labels';

  @ApiPropertyOptional({ example: 1 })
  @ValidateIf((o: ScaleDto) => o.type === 'numeric')
  @IsNumber()
  @Min(-1000)
  @Max(1000)
  min?: number;

  @ApiPropertyOptional({ example: 5 })
  @ValidateIf((o: ScaleDto) => o.type === 'numeric')
  @IsNumber()
  @Min(-1000)
  @Max(1000)
  max?: number;

  @ApiPropertyOptional({ example: ['correct', 'partially_correct', 'incorrect'] })
  @ValidateIf((o: ScaleDto) => o.type === 'labels')
  @IsArray()
  @ArrayMinSize(2)
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(100, { each: true })
  labels?: string[];

  /** label -> score; default evenly spaced from 1 (first label) to 0 (last) */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'number' },
    example: { correct: 1, partially_correct: 0.5, incorrect: 0 },
  })
  @ValidateIf((o: ScaleDto, v) => o.type === 'labels' && v !== undefined)
  @IsObject()
  scores?: Record<string, number>;
}

export class JudgeTestRequest {
  /** A rubric to try instead of the built-in probe; placeholders {{input}}, {{output}}, {{expected_output}}, {{context}} */
  @ApiPropertyOptional({ example: EXAMPLE_RUBRIC })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(20_000)
  rubric?: string;

  @ValidateIfPresent()
  @NestedObject(() => ScaleDto)
  scale?: ScaleDto;

  @ApiPropertyOptional({ example: 'How do I reset my password?' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(20_000)
  input?: string;

  @ApiPropertyOptional({ example: 'Go to Settings > Security and click Reset password.' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(20_000)
  output?: string;

  @ApiPropertyOptional({ example: 'Open Settings > Security and choose Reset password.' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(20_000)
  expected_output?: string;
}

export class JudgeConnectionResponse {
  @ApiProperty({ example: EXAMPLE_ID.judge })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.judge })
  name: string;
  @ApiProperty({ example: EXAMPLE_DESCRIPTION })
  description: string;
  @ApiProperty({ enum: JUDGE_PROVIDERS, example: 'openai_compatible' })
  provider: JudgeProvider;
  @ApiProperty({ example: 'https://api.openai.com/v1' })
  base_url: string;
  @ApiProperty({ example: 'gpt-4o-mini' })
  model: string;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  api_version: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, example: { temperature: 0, max_tokens: 512 } })
  parameters: Record<string, unknown>;
  @ApiProperty({ example: true })
  json_mode: boolean;
  @ApiProperty({ example: 60000 })
  timeout_ms: number;
  @ApiProperty({ example: 3 })
  max_attempts: number;
  @ApiProperty({ example: 4 })
  max_concurrency: number;
  /** The secret holding the key (its value never appears here) */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.secret })
  secret_id: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}

export class VerdictDto {
  @ApiProperty({ example: 4 })
  score: number;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  label: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'Same steps as the reference; omits that the link expires.' })
  reason: string | null;
  /** The score mapped to [0, 1] */
  @ApiProperty({ example: 0.75 })
  normalized: number;
}

export class JudgeErrorDto {
  /** timeout, network, http_status, malformed_response, unparseable_verdict, off_scale */
  @ApiProperty({ example: 'timeout' })
  code: string;
  @ApiProperty({ example: 'The judge did not answer within 60000 ms' })
  message: string;
}

export class JudgeUsageDto {
  @ApiProperty({ type: 'integer', nullable: true, example: 182 })
  prompt_tokens: number | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 41 })
  completion_tokens: number | null;
}

export class JudgeTestResult {
  /** True when the judge answered and the answer parsed into a verdict on the scale */
  @ApiProperty({ example: true })
  ok: boolean;
  @ApiProperty({ type: 'integer', nullable: true, example: 200 })
  status_code: number | null;
  @ApiProperty({ example: 843 })
  latency_ms: number;
  @ApiProperty({ example: 1 })
  attempts: number;
  /** The parsed answer; null when there is none (see error) */
  @ApiProperty({ type: () => VerdictDto, nullable: true })
  verdict: VerdictDto | null;
  /** The judge's text answer (first 4000 characters) */
  @ApiProperty({
    type: 'string',
    nullable: true,
    example: '{"score": 4, "reason": "Same steps as the reference; omits that the link expires."}',
  })
  answer: string | null;
  usage: JudgeUsageDto;
  @ApiProperty({ type: () => JudgeErrorDto, nullable: true })
  error: JudgeErrorDto | null;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  response_excerpt: string | null;
}
