import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsISO8601,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';

export const AUDIT_EXPORT_FORMATS = ['jsonl', 'csv'] as const;
export type AuditExportFormat = (typeof AUDIT_EXPORT_FORMATS)[number];

/** The longest and shortest retention a workspace may set, in days (the environment's default may be shorter). */
export const WORKSPACE_RETENTION_DAYS = { min: 30, max: 36500 } as const;

/** What the audit log's reads and exports filter by; every member narrows the answer. */
export class AuditFilterQuery {
  /** Events of this user (the actor's id) */
  @IsOptional()
  @IsUUID()
  actor_id?: string;

  /** Events with exactly this action, e.g. `member.role_changed` */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  @Matches(/^[a-z0-9_.]+$/, { message: 'action must be a dotted action name (a-z, 0-9, _ and .)' })
  action?: string;

  /** Events whose action starts with this, e.g. `member.` or `api_key` */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  @Matches(/^[a-z0-9_.]+$/, { message: 'action_prefix must be the start of a dotted action name (a-z, 0-9, _ and .)' })
  action_prefix?: string;

  /** Events about records of this kind, e.g. `secret`, `member`, `dataset` */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @Matches(/^[a-z0-9_]+$/, { message: 'target_type must be a record kind (a-z, 0-9 and _)' })
  target_type?: string;

  /** Events about this record (its id) */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  target_id?: string;

  /** Events recorded at or after this instant (ISO 8601) */
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true }, { message: 'from must be an ISO 8601 date-time' })
  @MaxLength(40)
  from?: string;

  /** Events recorded before this instant (ISO 8601) */
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true }, { message: 'to must be an ISO 8601 date-time' })
  @MaxLength(40)
  to?: string;
}

export class ListAuditEventsQuery extends AuditFilterQuery {
  /** Events at most (newest first), 1..200 */
  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit: number = 50;

  /** The `next_cursor` of the page before: the events older than its last */
  @IsOptional()
  @IsUUID()
  cursor?: string;
}

export class ExportAuditEventsQuery extends AuditFilterQuery {
  /** `jsonl` (JSON Lines, one event a line) or `csv`; wins over the Accept header */
  @ApiPropertyOptional({ enum: AUDIT_EXPORT_FORMATS })
  @IsOptional()
  @IsIn(AUDIT_EXPORT_FORMATS)
  format?: AuditExportFormat;
}

/** One entry of the audit log: who did what to which record, when, in which request. */
export class AuditEventResponse {
  @ApiProperty({ format: 'uuid', example: '4d3c2b1a-9e8f-4a7b-8c6d-5e4f3a2b1c0d' })
  id: string;
  /** The workspace it happened in; null for the system's own events (users, logins, branding) */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.workspace })
  workspace_id: string | null;
  /** Dotted verb, `<record>.<what happened>`: member.role_changed, secret.revealed, api_key.created… (docs/audit.md) */
  @ApiProperty({ example: 'member.role_changed' })
  action: string;
  /** Who did it; null when the service did it itself (a retention sweep, the first admin at boot) */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  actor_id: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_NAME.userEmail })
  actor_email: string | null;
  /** The kind of record it was done to */
  @ApiProperty({ example: 'member' })
  target_type: string;
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_ID.member })
  target_id: string | null;
  /** What changed (names, roles before and after, counts); never a secret value. `api_key_id` when the call was made with an API key */
  @ApiProperty({ type: 'object', additionalProperties: true, example: { from: 'member', to: 'admin' } })
  details: Record<string, unknown>;
  /** The request that did it (its X-Request-Id); null for background work */
  @ApiProperty({ type: 'string', nullable: true, example: EXAMPLE_ID.request })
  request_id: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', example: EXAMPLE_AT.created })
  created_at: Date;
}

export class AuditEventPageResponse {
  /** Newest first */
  @ApiProperty({ type: () => [AuditEventResponse] })
  items: AuditEventResponse[];
  /** Send as `cursor` for the next (older) page; null on the last page */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: '4d3c2b1a-9e8f-4a7b-8c6d-5e4f3a2b1c0d' })
  next_cursor: string | null;
}

export class PutAuditRetentionRequest {
  /** Days the workspace keeps its audit events (30..36500); null follows the service's default (AUDIT_RETENTION_DAYS) */
  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: WORKSPACE_RETENTION_DAYS.min,
    maximum: WORKSPACE_RETENTION_DAYS.max,
    example: 365,
  })
  @ValidateIf((_, value) => value !== null)
  @IsInt()
  @Min(WORKSPACE_RETENTION_DAYS.min)
  @Max(WORKSPACE_RETENTION_DAYS.max)
  retention_days: number | null;
}

export class AuditRetentionResponse {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.workspace })
  workspace_id: string;
  /** The workspace's own setting; null when it follows the default */
  @ApiProperty({ type: 'integer', nullable: true, example: 365 })
  retention_days: number | null;
  /** The service's default (AUDIT_RETENTION_DAYS); null keeps events */
  @ApiProperty({ type: 'integer', nullable: true, example: null })
  default_retention_days: number | null;
  /** What applies: the workspace's own, else the default; null keeps events */
  @ApiProperty({ type: 'integer', nullable: true, example: 365 })
  effective_retention_days: number | null;
  /** Who set the workspace's own, and when; null without one */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  updated_by: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.created })
  updated_at: Date | null;
}
