import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsNumber, IsObject, IsString, IsUrl, IsUUID, Matches, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';
import { IsBoundedJson, IsStringRecord, NestedObject } from '../../../../libs/common/record-validators.js';
import { CONNECTION_KINDS, HTTP_METHODS, type ConnectionKind, type HttpMethod } from '../../../../libs/evaluation/sut/sut.types.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
const present = (_: object, value: unknown) => value !== undefined;
const url = { require_protocol: true, protocols: ['http', 'https'], require_tld: false };
const AUTH_SCHEMES = ['bearer', 'header', 'query'] as const;

export class HttpTransportDto {
  /** The endpoint, http or https */
  @IsUrl(url) @MaxLength(2000)
  url: string;

  @ApiPropertyOptional({ enum: HTTP_METHODS, default: 'POST' })
  @ValidateIf(present) @IsIn(HTTP_METHODS)
  method?: HttpMethod;

  /** Static headers sent with every call (templated headers are the adapter's); put keys in `auth`, never here */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @ValidateIf(present) @IsStringRecord(50)
  headers?: Record<string, string>;
}

export class OpenAiChatTransportDto {
  /** The API root, e.g. https://api.openai.com/v1 (`/chat/completions` is appended) */
  @IsUrl(url) @MaxLength(2000)
  base_url: string;

  @IsString() @MinLength(1) @MaxLength(200)
  model: string;

  /** Sent in every body: temperature, max_tokens, top_p, seed, stop, response_format… */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @ValidateIf(present) @IsObject() @IsBoundedJson(16_000)
  parameters?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @ValidateIf(present) @IsStringRecord(50)
  headers?: Record<string, string>;
}

export class ConnectionAuthDto {
  /** The workspace secret whose value is sent (admins choose where a secret goes) */
  @IsUUID()
  secret_id: string;

  /** `bearer`: Authorization: Bearer <value>; `header`: <header>: <prefix><value>; `query`: ?<param>=<value> */
  @ApiProperty({ enum: AUTH_SCHEMES })
  @IsIn(AUTH_SCHEMES)
  scheme: (typeof AUTH_SCHEMES)[number];

  /** For `header`: the header name, e.g. x-api-key */
  @ValidateIf(present) @Matches(/^[A-Za-z0-9-]{1,100}$/)
  header?: string;

  /** For `header`: text before the value, e.g. "Token " */
  @ValidateIf(present) @IsString() @MaxLength(50)
  prefix?: string;

  /** For `query`: the parameter name */
  @ValidateIf(present) @Matches(/^[A-Za-z0-9_.-]{1,100}$/)
  param?: string;
}

export class RetryPolicyDto {
  /** Calls in all, the first included (1..10, default 3) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(10)
  max_attempts?: number;

  /** Default 500; doubles per attempt with full jitter */
  @ValidateIf(present) @IsInt() @Min(0) @Max(60_000)
  initial_backoff_ms?: number;

  /** Default 10000; also caps Retry-After */
  @ValidateIf(present) @IsInt() @Min(0) @Max(300_000)
  max_backoff_ms?: number;

  /** Default 408, 409, 425, 429, 500, 502, 503, 504 */
  @ValidateIf(present) @IsArray() @ArrayMaxSize(50) @IsInt({ each: true }) @Min(400, { each: true }) @Max(599, { each: true })
  retry_on_status?: number[];

  /** Default true */
  @ValidateIf(present) @IsBoolean()
  retry_on_timeout?: boolean;
}

/** What a connection holds beside its name; `kind` is fixed at creation. */
class ConnectionFields {
  /** For kind http */
  @ValidateIf(present) @NestedObject(() => HttpTransportDto)
  http?: HttpTransportDto;

  /** For kind openai_chat */
  @ValidateIf(present) @NestedObject(() => OpenAiChatTransportDto)
  openai_chat?: OpenAiChatTransportDto;

  /** The key to send, by secret reference; null removes it */
  @ApiPropertyOptional({ type: () => ConnectionAuthDto, nullable: true })
  @ValidateIf((_, v) => v !== undefined && v !== null) @NestedObject(() => ConnectionAuthDto)
  auth?: ConnectionAuthDto | null;

  /** Per attempt, 100..600000 ms (default 30000) */
  @ValidateIf(present) @IsInt() @Min(100) @Max(600_000)
  timeout_ms?: number;

  /** Calls a run keeps in flight at most, 1..256 (default 8) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(256)
  max_concurrency?: number;

  /** Calls a run starts per second at most, 0.01..10000; null for no limit (default) */
  @ApiPropertyOptional({ type: 'number', nullable: true, minimum: 0.01, maximum: 10_000 })
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0.01) @Max(10_000)
  requests_per_second?: number | null;

  @ValidateIf(present) @NestedObject(() => RetryPolicyDto)
  retry?: RetryPolicyDto;
}

export class UpdateConnectionRequest extends ConnectionFields {
  /** Unique within the SUT, case-insensitively */
  @ValidateIf(present) @Transform(trim) @IsString() @MinLength(1) @MaxLength(200)
  name?: string;
}

export class CreateConnectionRequest extends ConnectionFields {
  /** Unique within the SUT, case-insensitively (1..200 characters) */
  @Transform(trim) @IsString() @MinLength(1) @MaxLength(200)
  name: string;

  /** `http` (a JSON endpoint), `openai_chat` (an OpenAI-compatible chat completions API) or `offline` (outputs are uploaded to the run) */
  @ApiProperty({ enum: CONNECTION_KINDS })
  @IsIn(CONNECTION_KINDS)
  kind: ConnectionKind;
}

export class RetryPolicyResponse {
  max_attempts: number;
  initial_backoff_ms: number;
  max_backoff_ms: number;
  retry_on_status: number[];
  retry_on_timeout: boolean;
}

export class HttpTransportResponse {
  url: string;
  @ApiProperty({ enum: HTTP_METHODS })
  method: HttpMethod;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  headers: Record<string, string>;
}

export class OpenAiChatTransportResponse {
  base_url: string;
  model: string;
  @ApiProperty({ type: 'object', additionalProperties: true })
  parameters: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  headers: Record<string, string>;
}

export class ConnectionAuthResponse {
  /** The secret sent (its value never appears here) */
  secret_id: string;
  @ApiProperty({ enum: AUTH_SCHEMES })
  scheme: (typeof AUTH_SCHEMES)[number];
  @ApiPropertyOptional()
  header?: string;
  @ApiPropertyOptional()
  prefix?: string;
  @ApiPropertyOptional()
  param?: string;
}

export class ConnectionResponse {
  id: string;
  sut_id: string;
  workspace_id: string;
  name: string;
  @ApiProperty({ enum: CONNECTION_KINDS })
  kind: ConnectionKind;
  @ApiProperty({ type: () => HttpTransportResponse, nullable: true })
  http: HttpTransportResponse | null;
  @ApiProperty({ type: () => OpenAiChatTransportResponse, nullable: true })
  openai_chat: OpenAiChatTransportResponse | null;
  @ApiProperty({ type: () => ConnectionAuthResponse, nullable: true })
  auth: ConnectionAuthResponse | null;
  timeout_ms: number;
  max_concurrency: number;
  @ApiProperty({ type: 'number', nullable: true })
  requests_per_second: number | null;
  retry: RetryPolicyResponse;
  /** The adapter revision in force; 0 while the kind's default adapter is used */
  adapter_revision: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}
