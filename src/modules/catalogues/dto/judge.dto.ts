import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsInt, IsNumber, IsObject, IsString, IsUrl, IsUUID, Matches, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../../../libs/common/pagination.js';
import { IsBoundedJson, NestedObject } from '../../../../libs/common/record-validators.js';
import { JUDGE_PROVIDERS, type JudgeProvider } from '../../../../libs/evaluation/judges/judge.types.js';
import { CreateCatalogueEntryRequest } from './catalogue-entry.dto.js';

const present = (_: object, value: unknown) => value !== undefined;
const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
const url = { require_protocol: true, protocols: ['http', 'https'], require_tld: false };

export class ListJudgesQuery extends PageQueryDto {
  @IsUUID()
  workspace_id: string;

  @ApiPropertyOptional({ enum: JUDGE_PROVIDERS })
  @ValidateIf(present) @IsIn(JUDGE_PROVIDERS)
  provider?: JudgeProvider;
}

/** A judge's optional settings, shared by create and update. */
class JudgeTuning {
  /** azure_openai: the API version (default 2024-10-21) */
  @ApiPropertyOptional({ type: 'string', nullable: true })
  @ValidateIf((_, v) => v !== undefined && v !== null) @Matches(/^\d{4}-\d{2}-\d{2}(-preview)?$/)
  api_version?: string | null;

  /** Sent with every call: temperature, max_tokens, top_p, seed… (temperature 0 is advised for grading) */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @ValidateIf(present) @IsObject() @IsBoundedJson(16_000)
  parameters?: Record<string, unknown>;

  /** Ask for a JSON answer where the provider supports it (default true) */
  @ValidateIf(present) @IsBoolean()
  json_mode?: boolean;

  /** Per attempt, 1000..600000 ms (default 60000) */
  @ValidateIf(present) @IsInt() @Min(1000) @Max(600_000)
  timeout_ms?: number;

  /** Attempts in all on 429, 5xx and timeouts, 1..10 (default 3) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(10)
  max_attempts?: number;

  /** Grading calls a run keeps in flight at most, 1..128 (default 4) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(128)
  max_concurrency?: number;

  /** The workspace secret holding the API key (admins); null removes it */
  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true })
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsUUID()
  secret_id?: string | null;
}

export class CreateJudgeRequest extends IntersectionType(CreateCatalogueEntryRequest, JudgeTuning) {
  @ApiProperty({ enum: JUDGE_PROVIDERS })
  @IsIn(JUDGE_PROVIDERS)
  provider: JudgeProvider;

  /** The API root: https://api.openai.com/v1 (openai_compatible), https://<resource>.openai.azure.com (azure_openai), https://api.anthropic.com (anthropic) */
  @IsUrl(url) @MaxLength(2000)
  base_url: string;

  /** The model, or for azure_openai the deployment name */
  @IsString() @MinLength(1) @MaxLength(200)
  model: string;
}

export class UpdateJudgeRequest extends JudgeTuning {
  @ValidateIf(present) @IsUrl(url) @MaxLength(2000)
  base_url?: string;

  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(200)
  model?: string;

  @ValidateIf(present) @Transform(trim) @IsString() @Matches(/^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$/)
  name?: string;

  @ValidateIf(present) @IsString() @MaxLength(2000)
  description?: string;
}

export class ScaleDto {
  /** `numeric` ({min, max}) or `labels` ({labels, scores?}) */
  @ApiProperty({ enum: ['numeric', 'labels'] })
  @IsIn(['numeric', 'labels'])
  type: 'numeric' | 'labels';

  @ValidateIf((o: ScaleDto) => o.type === 'numeric') @IsNumber() @Min(-1000) @Max(1000)
  min?: number;

  @ValidateIf((o: ScaleDto) => o.type === 'numeric') @IsNumber() @Min(-1000) @Max(1000)
  max?: number;

  @ValidateIf((o: ScaleDto) => o.type === 'labels') @IsArray() @ArrayMinSize(2) @ArrayMaxSize(20) @IsString({ each: true }) @MinLength(1, { each: true }) @MaxLength(100, { each: true })
  labels?: string[];

  /** label -> score; default evenly spaced from 1 (first label) to 0 (last) */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'number' } })
  @ValidateIf((o: ScaleDto, v) => o.type === 'labels' && v !== undefined) @IsObject()
  scores?: Record<string, number>;
}

export class JudgeTestRequest {
  /** A rubric to try instead of the built-in probe; placeholders {{input}}, {{output}}, {{expected_output}}, {{context}} */
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(20_000)
  rubric?: string;

  @ValidateIf(present) @NestedObject(() => ScaleDto)
  scale?: ScaleDto;

  @ValidateIf(present) @IsString() @MaxLength(20_000)
  input?: string;

  @ValidateIf(present) @IsString() @MaxLength(20_000)
  output?: string;

  @ValidateIf(present) @IsString() @MaxLength(20_000)
  expected_output?: string;
}

export class JudgeConnectionResponse {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  @ApiProperty({ enum: JUDGE_PROVIDERS })
  provider: JudgeProvider;
  base_url: string;
  model: string;
  @ApiProperty({ type: 'string', nullable: true })
  api_version: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true })
  parameters: Record<string, unknown>;
  json_mode: boolean;
  timeout_ms: number;
  max_attempts: number;
  max_concurrency: number;
  /** The secret holding the key (its value never appears here) */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  secret_id: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export class VerdictDto {
  score: number;
  @ApiProperty({ type: 'string', nullable: true })
  label: string | null;
  @ApiProperty({ type: 'string', nullable: true })
  reason: string | null;
  /** The score mapped to [0, 1] */
  normalized: number;
}

export class JudgeErrorDto {
  /** timeout, network, http_status, malformed_response, unparseable_verdict, off_scale */
  code: string;
  message: string;
}

export class JudgeUsageDto {
  @ApiProperty({ type: 'integer', nullable: true })
  prompt_tokens: number | null;
  @ApiProperty({ type: 'integer', nullable: true })
  completion_tokens: number | null;
}

export class JudgeTestResult {
  /** True when the judge answered and the answer parsed into a verdict on the scale */
  ok: boolean;
  @ApiProperty({ type: 'integer', nullable: true })
  status_code: number | null;
  latency_ms: number;
  attempts: number;
  /** The parsed answer; null when there is none (see error) */
  @ApiProperty({ type: () => VerdictDto, nullable: true })
  verdict: VerdictDto | null;
  /** The judge's text answer (first 4000 characters) */
  @ApiProperty({ type: 'string', nullable: true })
  answer: string | null;
  usage: JudgeUsageDto;
  @ApiProperty({ type: () => JudgeErrorDto, nullable: true })
  error: JudgeErrorDto | null;
  @ApiProperty({ type: 'string', nullable: true })
  response_excerpt: string | null;
}
