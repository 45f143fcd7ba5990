import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsObject, IsString, MaxLength, MinLength } from 'class-validator';
import {
  ANY_JSON_OR_NULL,
  boundedJsonSchema,
  IsBoundedJson,
  IsStringRecord,
  NestedObject,
  stringRecordSchema,
} from '#libs/common/record-validators.js';
import { PATH_LANGUAGES, type PathLanguage } from '#libs/evaluation/sut/sut.types.js';
import type { Trajectory } from '#libs/evaluation/trajectory/trajectory.types.js';
import {
  ApiSchemaExample,
  EXAMPLE_AT,
  EXAMPLE_ID,
  EXAMPLE_OUTPUT,
  EXAMPLE_ROW,
  EXAMPLE_TRAJECTORY,
} from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

const TEMPLATE_LIMIT = 64_000;
/** The sample response a validation tries the extraction on, as JSON. */
const SAMPLE_RESPONSE_LIMIT = 1_000_000;

/** The adapter of the examples: support-bot-v2's JSON API, and what it answers. */
const EXAMPLE_ADAPTER = {
  request: { body: { question: '{{input}}', history: '{{history}}' }, headers: { 'X-Request-Source': 'evaluation' } },
  response: {
    language: 'jsonpath',
    output: '$.answer',
    usage: {
      prompt_tokens: '$.usage.prompt_tokens',
      completion_tokens: '$.usage.completion_tokens',
      total_tokens: '$.usage.total_tokens',
    },
    extras: { sources: '$.sources' },
  },
};
const EXAMPLE_SUT_ANSWER = {
  answer: EXAMPLE_OUTPUT,
  sources: ['kb/security/reset-password'],
  usage: { prompt_tokens: 412, completion_tokens: 38, total_tokens: 450 },
};

export class AdapterRequestDto {
  /** http: the JSON body template; openai_chat: merged over {model, messages, ...parameters}. Strings may hold {{placeholders}} (docs/suts.md) */
  @ApiPropertyOptional({
    ...boundedJsonSchema(ANY_JSON_OR_NULL, TEMPLATE_LIMIT),
    description: 'Any JSON value; a string that is exactly one placeholder is replaced by the value itself',
    example: { question: '{{input}}', history: '{{history}}' },
  } as ApiPropertyOptions)
  @ValidateIfPresent()
  @IsBoundedJson(TEMPLATE_LIMIT)
  body?: unknown;

  /** openai_chat only: the messages template; an element that is exactly "{{history}}" is spread into the earlier turns */
  @ApiPropertyOptional({
    type: 'array',
    items: {},
    example: [
      { role: 'system', content: 'You are a support agent.' },
      '{{history}}',
      { role: 'user', content: '{{input}}' },
    ],
  })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(200)
  @IsBoundedJson(TEMPLATE_LIMIT)
  messages?: unknown[];

  /** Headers, templated */
  @ApiPropertyOptional({
    ...stringRecordSchema(50),
    example: { 'X-Request-Source': 'evaluation' },
  })
  @ValidateIfPresent()
  @IsStringRecord(50)
  headers?: Record<string, string>;

  /** Query parameters, templated */
  @ApiPropertyOptional({ ...stringRecordSchema(50), example: { locale: 'en' } })
  @ValidateIfPresent()
  @IsStringRecord(50)
  query?: Record<string, string>;
}

export class UsagePathsDto {
  @ApiPropertyOptional({ example: '$.usage.prompt_tokens' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(500)
  prompt_tokens?: string;
  @ApiPropertyOptional({ example: '$.usage.completion_tokens' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(500)
  completion_tokens?: string;
  @ApiPropertyOptional({ example: '$.usage.total_tokens' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(500)
  total_tokens?: string;
}

export class AdapterResponseMappingDto {
  /** The path language of every expression here */
  @ApiProperty({ enum: PATH_LANGUAGES, example: 'jsonpath' })
  @IsIn(PATH_LANGUAGES)
  language: PathLanguage;

  /** Where the output is, e.g. `$.choices[0].message.content` (JSONPath) or `choices[0].message.content` (JMESPath) */
  @ApiProperty({ example: '$.answer' })
  @IsString()
  @MinLength(1)
  @MaxLength(500)
  output: string;

  @ValidateIfPresent()
  @NestedObject(() => UsagePathsDto)
  usage?: UsagePathsDto;

  /** Where the SUT reports its own cost in USD */
  @ApiPropertyOptional({ example: '$.cost.usd' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(500)
  cost_usd?: string;

  /** More fields kept with each result, by name (e.g. contexts of a RAG answer) */
  @ApiPropertyOptional({ ...stringRecordSchema(20), example: { sources: '$.sources' } })
  @ValidateIfPresent()
  @IsStringRecord(20)
  extras?: Record<string, string>;

  /**
   * Where an agent endpoint lists its steps: a list of `{type?, name|tool|tool_name|function.name,
   * arguments|args|input|function.arguments, output|result, error}` or of OpenAI chat messages.
   * openai_chat connections read the completion's tool calls without it
   */
  @ApiPropertyOptional({ example: '$.steps' })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(500)
  trajectory?: string;
}

@ApiSchemaExample(EXAMPLE_ADAPTER)
export class CreateAdapterRequest {
  @NestedObject(() => AdapterRequestDto)
  request: AdapterRequestDto;

  @NestedObject(() => AdapterResponseMappingDto)
  response: AdapterResponseMappingDto;
}

export class AdapterResponse {
  /** null for the kind's default adapter (no revision posted yet) */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.adapter })
  id: string | null;
  @ApiProperty({ example: EXAMPLE_ID.connection })
  connection_id: string;
  /** 1, 2, … per POST; 0 for the kind's default */
  @ApiProperty({ example: 2 })
  revision: number;
  /** `default` until an adapter is posted */
  @ApiProperty({ enum: ['default', 'custom'], example: 'custom' })
  source: 'default' | 'custom';
  request: AdapterRequestDto;
  response: AdapterResponseMappingDto;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.created })
  created_at: Date | null;
}

export class ChatMessageDto {
  @ApiProperty({ enum: ['system', 'user', 'assistant', 'tool'], example: 'user' })
  @IsIn(['system', 'user', 'assistant', 'tool'])
  role: 'system' | 'user' | 'assistant' | 'tool';

  @ApiProperty({ example: 'I forgot my password.' })
  @IsString()
  @MaxLength(100_000)
  content: string;
}

export class RowMappingDto {
  /** Column holding the input (default `input`) */
  @ApiPropertyOptional({ example: 'question' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(500)
  input?: string;
  /** Column holding the reference answer (default `expected_output`) */
  @ApiPropertyOptional({ example: 'answer' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(500)
  expected_output?: string;
  /** Column holding retrieved context (default `context`) */
  @ApiPropertyOptional({ example: 'context' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(500)
  context?: string;
}

/** A sample row, as a run would pass it. */
export class SampleRowDto {
  /** The row's columns */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: EXAMPLE_ROW })
  @ValidateIfPresent()
  @IsObject()
  @IsBoundedJson(256_000)
  row?: Record<string, unknown>;

  /** Which columns are input, expected_output and context (defaults: columns of those names) */
  @ValidateIfPresent()
  @NestedObject(() => RowMappingDto)
  mapping?: RowMappingDto;

  /** Earlier turns of the conversation, for multi-turn rows */
  @ApiPropertyOptional({ type: () => [ChatMessageDto] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(200)
  @NestedObject(() => ChatMessageDto, { each: true })
  history?: ChatMessageDto[];
}

@ApiSchemaExample({
  row: EXAMPLE_ROW,
  mapping: { input: 'question', expected_output: 'answer' },
  adapter: EXAMPLE_ADAPTER,
  response: EXAMPLE_SUT_ANSWER,
})
export class ValidateAdapterRequest extends SampleRowDto {
  /** The adapter to check; default: the connection's adapter in force */
  @ValidateIfPresent()
  @NestedObject(() => CreateAdapterRequest)
  adapter?: CreateAdapterRequest;

  /** A response body as the SUT would answer, to try the extraction on */
  @ApiPropertyOptional({
    ...boundedJsonSchema(ANY_JSON_OR_NULL, SAMPLE_RESPONSE_LIMIT),
    description: 'Any JSON value (or a string for a non-JSON answer)',
    example: EXAMPLE_SUT_ANSWER,
  } as ApiPropertyOptions)
  @ValidateIfPresent()
  @IsBoundedJson(SAMPLE_RESPONSE_LIMIT)
  response?: unknown;
}

@ApiSchemaExample({ row: EXAMPLE_ROW, mapping: { input: 'question', expected_output: 'answer' } })
export class ConnectionTestRequest extends SampleRowDto {}

export class AdapterIssueDto {
  /** JSON Pointer into the adapter */
  @ApiProperty({ example: '/response/output' })
  pointer: string;
  @ApiProperty({
    enum: [
      'template_syntax',
      'unknown_placeholder',
      'missing_value',
      'path_syntax',
      'path_no_match',
      'not_a_number',
      'response_not_json',
      'invalid_spec',
    ],
    example: 'path_no_match',
  })
  code: string;
  @ApiProperty({ example: '$.answer matched nothing in the sample response' })
  message: string;
}

export class RenderedRequestDto {
  @ApiProperty({ example: 'POST' })
  method: string;
  /** Secrets in the URL show as *** */
  @ApiProperty({ example: 'https://support-bot.example.com/v2/answer' })
  url: string;
  /** Secrets show as *** */
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'content-type': 'application/json', authorization: 'Bearer ***' },
  })
  headers: Record<string, string>;
  @ApiPropertyOptional({
    ...ANY_JSON_OR_NULL,
    description: 'The JSON body, any JSON value',
    example: { question: 'How do I reset my password?', history: [] },
  } as ApiPropertyOptions)
  body?: unknown;
}

export class TokenUsageDto {
  @ApiProperty({ type: 'number', nullable: true, example: 412 })
  prompt_tokens: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: 38 })
  completion_tokens: number | null;
  @ApiProperty({ type: 'number', nullable: true, example: 450 })
  total_tokens: number | null;
}

export class ExtractedOutputDto {
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_OUTPUT })
  output: string | null;
  usage: TokenUsageDto;
  @ApiProperty({ type: 'number', nullable: true, example: 0.00041 })
  cost_usd: number | null;
  @ApiProperty({ type: 'object', additionalProperties: true, example: { sources: ['kb/security/reset-password'] } })
  extras: Record<string, unknown>;
  /** The tool calls and steps the answer shows (docs/suts.md: trajectories); null when it shows none */
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, example: EXAMPLE_TRAJECTORY })
  trajectory: Trajectory | null;
}

export class AdapterValidateResult {
  /** True when the request rendered and (if a response was given) the output was extracted */
  @ApiProperty({ example: true })
  valid: boolean;
  @ApiProperty({ type: () => [AdapterIssueDto], example: [] })
  issues: AdapterIssueDto[];
  /** The request a run would send for the sample row (null when it cannot render) */
  @ApiProperty({ type: () => RenderedRequestDto, nullable: true })
  request: RenderedRequestDto | null;
  /** What was extracted from the sample response (null without one) */
  @ApiProperty({ type: () => ExtractedOutputDto, nullable: true })
  extracted: ExtractedOutputDto | null;
  /** The revision checked; null when the adapter came in the body */
  @ApiProperty({ type: 'integer', nullable: true, example: null })
  adapter_revision: number | null;
}

export class ConnectionTestErrorDto {
  @ApiProperty({
    enum: ['timeout', 'network', 'http_status', 'response_not_json', 'extraction_failed', 'render_failed', 'cancelled'],
    example: 'http_status',
  })
  code: string;
  @ApiProperty({ example: 'The SUT answered 503 Service Unavailable' })
  message: string;
  @ApiPropertyOptional({ type: () => [AdapterIssueDto] })
  issues?: AdapterIssueDto[];
}

export class ConnectionTestResult {
  /** True when the SUT answered 2xx and the output was extracted */
  @ApiProperty({ example: true })
  ok: boolean;
  @ApiProperty({ type: 'integer', nullable: true, example: 200 })
  status_code: number | null;
  @ApiProperty({ example: 1040 })
  latency_ms: number;
  @ApiProperty({ example: 1 })
  attempts: number;
  request: RenderedRequestDto;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_OUTPUT })
  output: string | null;
  @ApiProperty({ type: () => TokenUsageDto, nullable: true })
  usage: TokenUsageDto | null;
  @ApiProperty({ type: 'number', nullable: true, example: 0.00041 })
  cost_usd: number | null;
  @ApiProperty({ type: 'object', additionalProperties: true, example: { sources: ['kb/security/reset-password'] } })
  extras: Record<string, unknown>;
  /** The tool calls and steps the answer shows (docs/suts.md: trajectories); null when it shows none */
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, example: EXAMPLE_TRAJECTORY })
  trajectory: Trajectory | null;
  @ApiProperty({ type: () => ConnectionTestErrorDto, nullable: true })
  error: ConnectionTestErrorDto | null;
  /** The start of the body when the call failed */
  @ApiProperty({ type: 'string', nullable: true, example: null })
  response_excerpt: string | null;
  @ApiProperty({ example: 2 })
  adapter_revision: number;
}
