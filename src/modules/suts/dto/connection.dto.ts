import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
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
import { IsBoundedJson, IsStringRecord, NestedObject, stringRecordSchema } from '#libs/common/record-validators.js';
import {
  CONNECTION_KINDS,
  HTTP_METHODS,
  type ConnectionKind,
  type HttpMethod,
} from '#libs/evaluation/sut/sut.types.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';

// Values the examples below share.
const EXAMPLE_URL = 'https://support-bot.example.com/v2/answer';

const url = { require_protocol: true, protocols: ['http', 'https'], require_tld: false };
const AUTH_SCHEMES = ['bearer', 'header', 'query'] as const;

export class HttpTransportDto {
  /** The endpoint, http or https */
  @ApiProperty({ example: EXAMPLE_URL })
  @IsUrl(url)
  @MaxLength(2000)
  url: string;

  @ApiPropertyOptional({ enum: HTTP_METHODS, default: 'POST', example: 'POST' })
  @ValidateIfPresent()
  @IsIn(HTTP_METHODS)
  method?: HttpMethod;

  /** Static headers sent with every call (templated headers are the adapter's); put keys in `auth`, never here */
  @ApiPropertyOptional({
    ...stringRecordSchema(50),
    example: { 'X-Client': 'evaluation-workspace' },
  })
  @ValidateIfPresent()
  @IsStringRecord(50)
  headers?: Record<string, string>;
}

export class OpenAiChatTransportDto {
  /** The API root, e.g. https://api.openai.com/v1 (`/chat/completions` is appended) */
  @ApiProperty({ example: 'https://api.openai.com/v1' })
  @IsUrl(url)
  @MaxLength(2000)
  base_url: string;

  @ApiProperty({ example: 'gpt-4o-mini' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  model: string;

  /** Sent in every body: temperature, max_tokens, top_p, seed, stop, response_format… */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { temperature: 0, max_tokens: 512 } })
  @ValidateIfPresent()
  @IsObject()
  @IsBoundedJson(16_000)
  parameters?: Record<string, unknown>;

  @ApiPropertyOptional({
    ...stringRecordSchema(50),
    example: { 'OpenAI-Organization': 'org-example' },
  })
  @ValidateIfPresent()
  @IsStringRecord(50)
  headers?: Record<string, string>;
}

@ApiSchemaExample({ secret_id: EXAMPLE_ID.secret, scheme: 'bearer' })
export class ConnectionAuthDto {
  /** The workspace secret whose value is sent (admins choose where a secret goes) */
  @ApiProperty({ example: EXAMPLE_ID.secret })
  @IsUUID()
  secret_id: string;

  /** `bearer`: Authorization: Bearer <value>; `header`: <header>: <prefix><value>; `query`: ?<param>=<value> */
  @ApiProperty({ enum: AUTH_SCHEMES, example: 'bearer' })
  @IsIn(AUTH_SCHEMES)
  scheme: (typeof AUTH_SCHEMES)[number];

  /** For `header`: the header name, e.g. x-api-key */
  @ApiPropertyOptional({ example: 'x-api-key' })
  @ValidateIfPresent()
  @MaxLength(100)
  @Matches(/^[A-Za-z0-9-]{1,100}$/)
  header?: string;

  /** For `header`: text before the value, e.g. "Token " */
  @ApiPropertyOptional({ example: 'Token ' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(50)
  prefix?: string;

  /** For `query`: the parameter name */
  @ApiPropertyOptional({ example: 'api_key' })
  @ValidateIfPresent()
  @MaxLength(100)
  @Matches(/^[A-Za-z0-9_.-]{1,100}$/)
  param?: string;
}

export class RetryPolicyDto {
  /** Calls in all, the first included (1..10, default 3) */
  @ApiPropertyOptional({ example: 3 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(10)
  max_attempts?: number;

  /** Default 500; doubles per attempt with full jitter */
  @ApiPropertyOptional({ example: 500 })
  @ValidateIfPresent()
  @IsInt()
  @Min(0)
  @Max(60_000)
  initial_backoff_ms?: number;

  /** Default 10000; also caps Retry-After */
  @ApiPropertyOptional({ example: 10000 })
  @ValidateIfPresent()
  @IsInt()
  @Min(0)
  @Max(300_000)
  max_backoff_ms?: number;

  /** Default 408, 409, 425, 429, 500, 502, 503, 504 */
  @ApiPropertyOptional({ example: [408, 429, 500, 502, 503, 504] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(50)
  @IsInt({ each: true })
  @Min(400, { each: true })
  @Max(599, { each: true })
  retry_on_status?: number[];

  /** Default true */
  @ApiPropertyOptional({ example: true })
  @ValidateIfPresent()
  @IsBoolean()
  retry_on_timeout?: boolean;
}

@ApiSchemaExample({ dataset: 'support-bot-ci', wait_ms: 15000, settle_ms: 1000 })
export class TraceLinkDto {
  /** The trace dataset the SUT's exporter sends its spans to (its `x-ews-dataset`), 1..200 characters */
  @ApiProperty({ example: 'support-bot-ci' })
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  dataset: string;

  /** How long after each answer a run waits at most for the trace, 0..300000 ms (default 15000) */
  @ApiPropertyOptional({ example: 15000 })
  @ValidateIfPresent()
  @IsInt()
  @Min(0)
  @Max(300_000)
  wait_ms?: number;

  /** The trace counts as landed once its entry span has and nothing new has for this long, 0..60000 ms (default 1000) */
  @ApiPropertyOptional({ example: 1000 })
  @ValidateIfPresent()
  @IsInt()
  @Min(0)
  @Max(60_000)
  settle_ms?: number;
}

/** What a connection holds beside its name; `kind` is fixed at creation. */
class ConnectionFields {
  /** For kind http */
  @ValidateIfPresent()
  @NestedObject(() => HttpTransportDto)
  http?: HttpTransportDto;

  /** For kind openai_chat */
  @ValidateIfPresent()
  @NestedObject(() => OpenAiChatTransportDto)
  openai_chat?: OpenAiChatTransportDto;

  /** The key to send, by secret reference; null removes it */
  @ApiPropertyOptional({ type: () => ConnectionAuthDto, nullable: true })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @NestedObject(() => ConnectionAuthDto)
  auth?: ConnectionAuthDto | null;

  /** Per attempt, 100..600000 ms (default 30000) */
  @ApiPropertyOptional({ example: 30000 })
  @ValidateIfPresent()
  @IsInt()
  @Min(100)
  @Max(600_000)
  timeout_ms?: number;

  /** Calls a run keeps in flight at most, 1..256 (default 8) */
  @ApiPropertyOptional({ example: 8 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(256)
  max_concurrency?: number;

  /** Calls a run starts per second at most, 0.01..10000; null for no limit (default) */
  @ApiPropertyOptional({ type: 'number', nullable: true, minimum: 0.01, maximum: 10_000, example: 5 })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.01)
  @Max(10_000)
  requests_per_second?: number | null;

  @ValidateIfPresent()
  @NestedObject(() => RetryPolicyDto)
  retry?: RetryPolicyDto;

  /** Join each call to the trace the SUT exports of it (docs/agents.md); null removes it */
  @ApiPropertyOptional({ type: () => TraceLinkDto, nullable: true })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @NestedObject(() => TraceLinkDto)
  trace_link?: TraceLinkDto | null;
}

@ApiSchemaExample({ timeout_ms: 45000, max_concurrency: 4, requests_per_second: 2 })
export class UpdateConnectionRequest extends ConnectionFields {
  /** Unique within the SUT, case-insensitively */
  @ApiPropertyOptional({ example: EXAMPLE_NAME.connection })
  @ValidateIfPresent()
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;
}

@ApiSchemaExample({
  name: EXAMPLE_NAME.connection,
  kind: 'http',
  http: { url: EXAMPLE_URL, method: 'POST' },
  auth: { secret_id: EXAMPLE_ID.secret, scheme: 'bearer' },
  timeout_ms: 30000,
  max_concurrency: 8,
  retry: { max_attempts: 3 },
})
export class CreateConnectionRequest extends ConnectionFields {
  /** Unique within the SUT, case-insensitively (1..200 characters) */
  @ApiProperty({ example: EXAMPLE_NAME.connection })
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  /** `http` (a JSON endpoint), `openai_chat` (an OpenAI-compatible chat completions API) or `offline` (outputs are uploaded to the run) */
  @ApiProperty({ enum: CONNECTION_KINDS, example: 'http' })
  @IsIn(CONNECTION_KINDS)
  kind: ConnectionKind;
}

export class RetryPolicyResponse {
  @ApiProperty({ example: 3 })
  max_attempts: number;
  @ApiProperty({ example: 500 })
  initial_backoff_ms: number;
  @ApiProperty({ example: 10000 })
  max_backoff_ms: number;
  @ApiProperty({ example: [408, 429, 500, 502, 503, 504] })
  retry_on_status: number[];
  @ApiProperty({ example: true })
  retry_on_timeout: boolean;
}

export class HttpTransportResponse {
  @ApiProperty({ example: EXAMPLE_URL })
  url: string;
  @ApiProperty({ enum: HTTP_METHODS, example: 'POST' })
  method: HttpMethod;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: {} })
  headers: Record<string, string>;
}

export class OpenAiChatTransportResponse {
  @ApiProperty({ example: 'https://api.openai.com/v1' })
  base_url: string;
  @ApiProperty({ example: 'gpt-4o-mini' })
  model: string;
  @ApiProperty({ type: 'object', additionalProperties: true, example: { temperature: 0 } })
  parameters: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: {} })
  headers: Record<string, string>;
}

export class ConnectionAuthResponse {
  /** The secret sent (its value never appears here) */
  @ApiProperty({ example: EXAMPLE_ID.secret })
  secret_id: string;
  @ApiProperty({ enum: AUTH_SCHEMES, example: 'bearer' })
  scheme: (typeof AUTH_SCHEMES)[number];
  @ApiPropertyOptional({ example: 'x-api-key' })
  header?: string;
  @ApiPropertyOptional({ example: 'Token ' })
  prefix?: string;
  @ApiPropertyOptional({ example: 'api_key' })
  param?: string;
}

export class TraceLinkResponse {
  @ApiProperty({ example: 'support-bot-ci' })
  dataset: string;
  @ApiProperty({ example: 15000 })
  wait_ms: number;
  @ApiProperty({ example: 1000 })
  settle_ms: number;
}

export class ConnectionResponse {
  @ApiProperty({ example: EXAMPLE_ID.connection })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.sut })
  sut_id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.connection })
  name: string;
  @ApiProperty({ enum: CONNECTION_KINDS, example: 'http' })
  kind: ConnectionKind;
  @ApiProperty({ type: () => HttpTransportResponse, nullable: true })
  http: HttpTransportResponse | null;
  @ApiProperty({ type: () => OpenAiChatTransportResponse, nullable: true })
  openai_chat: OpenAiChatTransportResponse | null;
  @ApiProperty({ type: () => ConnectionAuthResponse, nullable: true })
  auth: ConnectionAuthResponse | null;
  @ApiProperty({ example: 30000 })
  timeout_ms: number;
  @ApiProperty({ example: 8 })
  max_concurrency: number;
  @ApiProperty({ type: 'number', nullable: true, example: null })
  requests_per_second: number | null;
  retry: RetryPolicyResponse;
  /** Where the SUT exports its own trace of each call, joined to a run's rows (docs/agents.md) */
  @ApiProperty({ type: () => TraceLinkResponse, nullable: true })
  trace_link: TraceLinkResponse | null;
  /** The adapter revision in force; 0 while the kind's default adapter is used */
  @ApiProperty({ example: 2 })
  adapter_revision: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}
