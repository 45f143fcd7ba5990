import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsObject, IsString, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { ANY_JSON, IsBoundedJson, IsStringRecord, NestedObject } from '../../../../libs/common/record-validators.js';
import { PATH_LANGUAGES, type PathLanguage } from '../../../../libs/evaluation/sut/sut.types.js';

const present = (_: object, value: unknown) => value !== undefined;
const TEMPLATE_LIMIT = 64_000;

export class AdapterRequestDto {
  /** http: the JSON body template; openai_chat: merged over {model, messages, ...parameters}. Strings may hold {{placeholders}} (docs/suts.md) */
  @ApiPropertyOptional({ ...ANY_JSON, nullable: true, description: 'Any JSON value; a string that is exactly one placeholder is replaced by the value itself', example: { question: '{{input}}', history: '{{history}}' } })
  @ValidateIf(present) @IsBoundedJson(TEMPLATE_LIMIT)
  body?: unknown;

  /** openai_chat only: the messages template; an element that is exactly "{{history}}" is spread into the earlier turns */
  @ApiPropertyOptional({ type: 'array', items: {}, example: [{ role: 'system', content: 'You are a support agent.' }, '{{history}}', { role: 'user', content: '{{input}}' }] })
  @ValidateIf(present) @IsArray() @ArrayMaxSize(200) @IsBoundedJson(TEMPLATE_LIMIT)
  messages?: unknown[];

  /** Headers, templated */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @ValidateIf(present) @IsStringRecord(50)
  headers?: Record<string, string>;

  /** Query parameters, templated */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @ValidateIf(present) @IsStringRecord(50)
  query?: Record<string, string>;
}

export class UsagePathsDto {
  @ValidateIf(present) @IsString() @MaxLength(500)
  prompt_tokens?: string;
  @ValidateIf(present) @IsString() @MaxLength(500)
  completion_tokens?: string;
  @ValidateIf(present) @IsString() @MaxLength(500)
  total_tokens?: string;
}

export class AdapterResponseMappingDto {
  /** The path language of every expression here */
  @ApiProperty({ enum: PATH_LANGUAGES })
  @IsIn(PATH_LANGUAGES)
  language: PathLanguage;

  /** Where the output is, e.g. `$.choices[0].message.content` (JSONPath) or `choices[0].message.content` (JMESPath) */
  @IsString() @MinLength(1) @MaxLength(500)
  output: string;

  @ValidateIf(present) @NestedObject(() => UsagePathsDto)
  usage?: UsagePathsDto;

  /** Where the SUT reports its own cost in USD */
  @ValidateIf(present) @IsString() @MaxLength(500)
  cost_usd?: string;

  /** More fields kept with each result, by name (e.g. contexts of a RAG answer) */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @ValidateIf(present) @IsStringRecord(20)
  extras?: Record<string, string>;
}

export class CreateAdapterRequest {
  @NestedObject(() => AdapterRequestDto)
  request: AdapterRequestDto;

  @NestedObject(() => AdapterResponseMappingDto)
  response: AdapterResponseMappingDto;
}

export class AdapterResponse {
  /** null for the kind's default adapter (no revision posted yet) */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  id: string | null;
  connection_id: string;
  /** 1, 2, … per POST; 0 for the kind's default */
  revision: number;
  /** `default` until an adapter is posted */
  @ApiProperty({ enum: ['default', 'custom'] })
  source: 'default' | 'custom';
  request: AdapterRequestDto;
  response: AdapterResponseMappingDto;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  created_at: Date | null;
}

export class ChatMessageDto {
  @ApiProperty({ enum: ['system', 'user', 'assistant', 'tool'] })
  @IsIn(['system', 'user', 'assistant', 'tool'])
  role: 'system' | 'user' | 'assistant' | 'tool';

  @IsString() @MaxLength(100_000)
  content: string;
}

export class RowMappingDto {
  /** Column holding the input (default `input`) */
  @ValidateIf(present) @IsString() @MaxLength(500)
  input?: string;
  /** Column holding the reference answer (default `expected_output`) */
  @ValidateIf(present) @IsString() @MaxLength(500)
  expected_output?: string;
  /** Column holding retrieved context (default `context`) */
  @ValidateIf(present) @IsString() @MaxLength(500)
  context?: string;
}

/** A sample row, as a run would pass it. */
export class SampleRowDto {
  /** The row's columns */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { input: 'Where is my order?', expected_output: 'It ships tomorrow.' } })
  @ValidateIf(present) @IsObject() @IsBoundedJson(256_000)
  row?: Record<string, unknown>;

  /** Which columns are input, expected_output and context (defaults: columns of those names) */
  @ValidateIf(present) @NestedObject(() => RowMappingDto)
  mapping?: RowMappingDto;

  /** Earlier turns of the conversation, for multi-turn rows */
  @ApiPropertyOptional({ type: () => [ChatMessageDto] })
  @ValidateIf(present) @IsArray() @ArrayMaxSize(200) @NestedObject(() => ChatMessageDto, { each: true })
  history?: ChatMessageDto[];
}

export class ValidateAdapterRequest extends SampleRowDto {
  /** The adapter to check; default: the connection's adapter in force */
  @ValidateIf(present) @NestedObject(() => CreateAdapterRequest)
  adapter?: CreateAdapterRequest;

  /** A response body as the SUT would answer, to try the extraction on */
  @ApiPropertyOptional({ description: 'Any JSON value (or a string for a non-JSON answer)', example: { choices: [{ message: { content: 'It ships tomorrow.' } }], usage: { prompt_tokens: 12, completion_tokens: 5 } } })
  @ValidateIf(present) @IsBoundedJson(1_000_000)
  response?: unknown;
}

export class ConnectionTestRequest extends SampleRowDto {}

export class AdapterIssueDto {
  /** JSON Pointer into the adapter */
  pointer: string;
  @ApiProperty({ enum: ['template_syntax', 'unknown_placeholder', 'missing_value', 'path_syntax', 'path_no_match', 'not_a_number', 'response_not_json', 'invalid_spec'] })
  code: string;
  message: string;
}

export class RenderedRequestDto {
  method: string;
  /** Secrets in the URL show as *** */
  url: string;
  /** Secrets show as *** */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  headers: Record<string, string>;
  @ApiPropertyOptional({ ...ANY_JSON, nullable: true, description: 'The JSON body: any JSON value (a template that is exactly one placeholder renders as the value itself)' })
  body?: unknown;
}

export class TokenUsageDto {
  @ApiProperty({ type: 'number', nullable: true })
  prompt_tokens: number | null;
  @ApiProperty({ type: 'number', nullable: true })
  completion_tokens: number | null;
  @ApiProperty({ type: 'number', nullable: true })
  total_tokens: number | null;
}

export class ExtractedOutputDto {
  @ApiProperty({ type: 'string', nullable: true })
  output: string | null;
  usage: TokenUsageDto;
  @ApiProperty({ type: 'number', nullable: true })
  cost_usd: number | null;
  @ApiProperty({ type: 'object', additionalProperties: true })
  extras: Record<string, unknown>;
}

export class AdapterValidateResult {
  /** True when the request rendered and (if a response was given) the output was extracted */
  valid: boolean;
  @ApiProperty({ type: () => [AdapterIssueDto] })
  issues: AdapterIssueDto[];
  /** The request a run would send for the sample row (null when it cannot render) */
  @ApiProperty({ type: () => RenderedRequestDto, nullable: true })
  request: RenderedRequestDto | null;
  /** What was extracted from the sample response (null without one) */
  @ApiProperty({ type: () => ExtractedOutputDto, nullable: true })
  extracted: ExtractedOutputDto | null;
  /** The revision checked; null when the adapter came in the body */
  @ApiProperty({ type: 'integer', nullable: true })
  adapter_revision: number | null;
}

export class ConnectionTestErrorDto {
  @ApiProperty({ enum: ['timeout', 'network', 'http_status', 'response_not_json', 'extraction_failed', 'render_failed', 'cancelled'] })
  code: string;
  message: string;
  @ApiPropertyOptional({ type: () => [AdapterIssueDto] })
  issues?: AdapterIssueDto[];
}

export class ConnectionTestResult {
  /** True when the SUT answered 2xx and the output was extracted */
  ok: boolean;
  @ApiProperty({ type: 'integer', nullable: true })
  status_code: number | null;
  latency_ms: number;
  attempts: number;
  request: RenderedRequestDto;
  @ApiProperty({ type: 'string', nullable: true })
  output: string | null;
  @ApiProperty({ type: () => TokenUsageDto, nullable: true })
  usage: TokenUsageDto | null;
  @ApiProperty({ type: 'number', nullable: true })
  cost_usd: number | null;
  @ApiProperty({ type: 'object', additionalProperties: true })
  extras: Record<string, unknown>;
  @ApiProperty({ type: () => ConnectionTestErrorDto, nullable: true })
  error: ConnectionTestErrorDto | null;
  /** The start of the body when the call failed */
  @ApiProperty({ type: 'string', nullable: true })
  response_excerpt: string | null;
  adapter_revision: number;
}
