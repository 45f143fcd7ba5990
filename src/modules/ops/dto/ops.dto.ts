import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { MAX_INT32 } from '#libs/common/json-limits.js';
import { PageQueryDto } from '#libs/common/pagination.js';
import { IsBoundedJson } from '#libs/common/record-validators.js';
import { CUSTOM_OP_STATES, type CustomOpState } from '../entities/custom-op.entity.js';
import { OP_KINDS, type OpKind } from '../entities/registry-op.entity.js';
import { EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';

// Values the examples below share.
const EXAMPLE_DESCRIPTION = 'Share of toxic sentences in the answer, from the moderation model';
const EXAMPLE_ENDPOINT = 'https://ops.example.com/toxicity';
const EXAMPLE_HEALTH_URL = 'https://ops.example.com/healthz';

const url = { require_protocol: true, protocols: ['http', 'https'], require_tld: false };
export const OP_NAME_PATTERN = /^[a-z][a-z0-9_.-]{0,63}$/;
const OP_NAME_MESSAGE = 'name must be 1..64 lower-case letters, digits or _ . - and start with a letter';
const OP_SOURCES = ['builtin', 'workspace'] as const;

export class OpsWorkspaceQuery {
  /** The workspace whose operations to read */
  @IsUUID()
  workspace_id: string;
}

export class OpSchemaQuery extends OpsWorkspaceQuery {
  /** A registered op's version (default the newest) */
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value))
  @IsInt()
  @Min(1)
  @Max(MAX_INT32)
  version?: number;
}

export class ListRegistryQuery extends PageQueryDto {
  @IsUUID()
  workspace_id: string;

  @ApiPropertyOptional({ enum: OP_KINDS })
  @ValidateIfPresent()
  @IsIn(OP_KINDS)
  kind?: OpKind;

  @ApiPropertyOptional({ enum: OP_SOURCES })
  @ValidateIfPresent()
  @IsIn(OP_SOURCES)
  source?: (typeof OP_SOURCES)[number];
}

/** An operation served by one of the workspace's custom ops. */
export class RegisterOpBody {
  /** Unique in the workspace and not a built-in op's name; registering a name again adds a version */
  @ApiProperty({ example: EXAMPLE_NAME.customOp })
  @Trim()
  @IsString()
  @MaxLength(64)
  @Matches(OP_NAME_PATTERN, { message: OP_NAME_MESSAGE })
  name: string;

  @ApiProperty({ enum: OP_KINDS, example: 'metric' })
  @IsIn(OP_KINDS)
  kind: OpKind;

  @ApiPropertyOptional({ example: EXAMPLE_DESCRIPTION })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  /** JSON Schema (draft-07) of the op's parameters; its root must be an object schema. Default: an object with no properties allowed */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: {
      type: 'object',
      properties: { min_length: { type: 'integer', format: 'int32', minimum: 1, maximum: 100_000 } },
      additionalProperties: false,
    },
  })
  @ValidateIfPresent()
  @IsObject()
  @IsBoundedJson(64_000)
  params_schema?: Record<string, unknown>;

  /** The custom op (by name) whose endpoint serves this operation; it receives {op: <name>, params, items} */
  @ApiProperty({ example: EXAMPLE_NAME.customOp })
  @MaxLength(64)
  @Matches(OP_NAME_PATTERN, { message: 'custom_op must name a custom op of the workspace' })
  custom_op: string;
}

export class RegisterOpRequest extends RegisterOpBody {
  /** The workspace that registers the op (admins) */
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;
}

export class PublishCustomOpRequest extends OmitType(RegisterOpBody, ['custom_op'] as const) {
  /** Where the service POSTs batches: {op, params, items} -> {results} (docs/ops.md) */
  @ApiProperty({ example: EXAMPLE_ENDPOINT })
  @IsUrl(url)
  @MaxLength(2000)
  endpoint_url: string;

  /** Checked with GET on each deploy (2xx = healthy); default: an empty batch POSTed to endpoint_url must answer {results: []} */
  @ApiPropertyOptional({ example: EXAMPLE_HEALTH_URL })
  @ValidateIfPresent()
  @IsUrl(url)
  @MaxLength(2000)
  health_url?: string;

  /** Per call, 100..300000 ms (default 30000) */
  @ApiPropertyOptional({ example: 30000 })
  @ValidateIfPresent()
  @IsInt()
  @Min(100)
  @Max(300_000)
  timeout_ms?: number;

  /** A workspace secret sent as `Authorization: Bearer <value>` (admins choose where secrets go) */
  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.secret })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @IsUUID()
  secret_id?: string | null;
}

/** A new revision: what is left out stays as it was; the health check runs again. */
export class RedeployCustomOpRequest {
  @ApiPropertyOptional({ example: EXAMPLE_ENDPOINT })
  @ValidateIfPresent()
  @IsUrl(url)
  @MaxLength(2000)
  endpoint_url?: string;

  /** '' returns to the protocol probe */
  @ApiPropertyOptional({ example: EXAMPLE_HEALTH_URL })
  @ValidateIf((_, v) => v !== undefined && v !== '')
  @IsUrl(url)
  @MaxLength(2000)
  health_url?: string;

  @ApiPropertyOptional({ example: 45000 })
  @ValidateIfPresent()
  @IsInt()
  @Min(100)
  @Max(300_000)
  timeout_ms?: number;

  @ApiPropertyOptional({ example: 'Share of toxic sentences in the answer, from the moderation model v2' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  /** A new parameter schema: registers a new version of the op of the same name */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: {
      type: 'object',
      properties: { min_length: { type: 'integer', format: 'int32', minimum: 1, maximum: 100_000 } },
      additionalProperties: false,
    },
  })
  @ValidateIfPresent()
  @IsObject()
  @IsBoundedJson(64_000)
  params_schema?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.secret })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @IsUUID()
  secret_id?: string | null;
}

export class StopCustomOpRequest {
  /** Why it is stopped (kept with the state) */
  @ApiPropertyOptional({ example: 'The moderation model is being replaced' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(500)
  reason?: string;
}

export class ListCustomOpsQuery extends PageQueryDto {
  @ApiPropertyOptional({ enum: CUSTOM_OP_STATES })
  @ValidateIfPresent()
  @IsIn(CUSTOM_OP_STATES)
  state?: CustomOpState;
}

export class CustomOpRefDto {
  @ApiProperty({ example: EXAMPLE_NAME.customOp })
  name: string;
  @ApiProperty({ enum: CUSTOM_OP_STATES, example: 'active' })
  state: CustomOpState;
}

export class RegistryOpView {
  @ApiProperty({ example: EXAMPLE_NAME.customOp })
  name: string;
  @ApiProperty({ enum: OP_KINDS, example: 'metric' })
  kind: OpKind;
  @ApiProperty({ example: EXAMPLE_DESCRIPTION })
  description: string;
  /** `builtin` (the service's own) or `workspace` (registered, served by a custom op) */
  @ApiProperty({ enum: OP_SOURCES, example: 'workspace' })
  source: (typeof OP_SOURCES)[number];
  /** Registered ops: the newest version; built-ins: 1 */
  @ApiProperty({ example: 1 })
  version: number;
  /** Versions registered under the name */
  @ApiProperty({ example: 1 })
  version_count: number;
  /** JSON Schema (draft-07) of the parameters; they are checked against it wherever the op is used */
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { type: 'object', properties: {}, additionalProperties: false },
  })
  params_schema: Record<string, unknown>;
  /** The custom op serving it (null for built-ins) */
  @ApiProperty({ type: () => CustomOpRefDto, nullable: true })
  custom_op: CustomOpRefDto | null;
  /** Whether runs can use it now (its custom op is active) */
  @ApiProperty({ example: true })
  available: boolean;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  unavailable_reason: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.created })
  registered_at: Date | null;
}

export class RegistryListResponse {
  @ApiProperty({ type: () => [RegistryOpView] })
  items: RegistryOpView[];
  @ApiProperty({ example: 23 })
  total: number;
  @ApiProperty({ example: 1 })
  page: number;
  @ApiProperty({ example: 50 })
  page_size: number;
}

export class OpCatalogueEntry {
  @ApiProperty({ example: EXAMPLE_NAME.customOp })
  name: string;
  @ApiProperty({ example: EXAMPLE_DESCRIPTION })
  description: string;
  @ApiProperty({ enum: OP_SOURCES, example: 'workspace' })
  source: (typeof OP_SOURCES)[number];
  @ApiProperty({ example: 1 })
  version: number;
}

export class OpCatalogueKinds {
  @ApiProperty({ type: () => [OpCatalogueEntry] })
  metric: OpCatalogueEntry[];
  @ApiProperty({ type: () => [OpCatalogueEntry] })
  check: OpCatalogueEntry[];
  @ApiProperty({ type: () => [OpCatalogueEntry] })
  enrichment: OpCatalogueEntry[];
  @ApiProperty({ type: () => [OpCatalogueEntry] })
  transform: OpCatalogueEntry[];
}

/** What the workspace can use now, by kind (unavailable registered ops are left out; the registry lists them). */
export class OpCatalogue {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  kinds: OpCatalogueKinds;
  @ApiProperty({ example: 23 })
  total: number;
}

export class OpSchemaResponse {
  @ApiProperty({ example: 'rouge_l' })
  name: string;
  @ApiProperty({ enum: OP_KINDS, example: 'metric' })
  kind: OpKind;
  @ApiProperty({ example: 1 })
  version: number;
  /** The JSON Schema dialect */
  @ApiProperty({ example: 'http://json-schema.org/draft-07/schema#' })
  dialect: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { type: 'object', properties: { threshold: { type: 'number' } }, additionalProperties: false },
  })
  schema: Record<string, unknown>;
}

export class CustomOpRevisionDto {
  @ApiProperty({ example: 1 })
  revision: number;
  @ApiProperty({ example: EXAMPLE_ENDPOINT })
  endpoint_url: string;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_HEALTH_URL })
  health_url: string | null;
  @ApiProperty({ example: 30000 })
  timeout_ms: number;
  /** deploying, active, failed, or superseded by a later revision */
  @ApiProperty({ enum: ['deploying', 'active', 'failed', 'superseded'], example: 'active' })
  outcome: string;
  @ApiProperty({ type: 'string', nullable: true, example: null })
  reason: string | null;
  /** What the check saw: status_code, latency_ms, method, url */
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: { status_code: 200, latency_ms: 84, method: 'GET', url: EXAMPLE_HEALTH_URL },
  })
  health: Record<string, unknown> | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.updated })
  checked_at: Date | null;
}

export class CustomOpSummary {
  @ApiProperty({ example: EXAMPLE_ID.customOp })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.customOp })
  name: string;
  @ApiProperty({ example: EXAMPLE_DESCRIPTION })
  description: string;
  @ApiProperty({ enum: CUSTOM_OP_STATES, example: 'active' })
  state: CustomOpState;
  /** Why it is in this state (the failed check, who stopped it) */
  @ApiProperty({ type: 'string', nullable: true, example: null })
  state_reason: string | null;
  @ApiProperty({ example: 1 })
  revision: number;
  @ApiProperty({ example: EXAMPLE_ENDPOINT })
  endpoint_url: string;
  /** null: the protocol probe checks it */
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_HEALTH_URL })
  health_url: string | null;
  @ApiProperty({ example: 30000 })
  timeout_ms: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.secret })
  secret_id: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.updated })
  last_checked_at: Date | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}

export class CustomOpsListResponse {
  @ApiProperty({ type: () => [CustomOpSummary] })
  items: CustomOpSummary[];
  @ApiProperty({ example: 1 })
  total: number;
  @ApiProperty({ example: 1 })
  page: number;
  @ApiProperty({ example: 50 })
  page_size: number;
}

export class CustomOpDetailResponse extends CustomOpSummary {
  /** Newest first */
  @ApiProperty({ type: () => [CustomOpRevisionDto] })
  revisions: CustomOpRevisionDto[];
  /** The registered operations it serves */
  @ApiProperty({ type: () => [RegistryOpView] })
  ops: RegistryOpView[];
}

export class CustomOpPublishResponse {
  custom_op: CustomOpDetailResponse;
  /** The op registered under the same name */
  op: RegistryOpView;
  /** The queued health check; the op's state moves to active or failed when it ends (read GET .../custom_ops/{name}) */
  @ApiProperty({ example: EXAMPLE_ID.job })
  job_id: string;
}

export class CustomOpRedeployResponse {
  custom_op: CustomOpDetailResponse;
  @ApiProperty({ example: 2 })
  revision: number;
  @ApiProperty({ example: EXAMPLE_ID.job })
  job_id: string;
}

export class CustomOpStopResponse {
  custom_op: CustomOpSummary;
  /** The state before the stop */
  @ApiProperty({ enum: CUSTOM_OP_STATES, example: 'active' })
  previous_state: CustomOpState;
}
