import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsISO8601, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { WORKSPACE_ROLES, type WorkspaceRole } from '#libs/auth/roles.js';
import { PageQueryDto } from '#libs/common/pagination.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';

export const API_KEY_STATUSES = ['active', 'expired', 'revoked', 'all'] as const;
export type ApiKeyStatusFilter = (typeof API_KEY_STATUSES)[number];

export class CreateApiKeyRequest {
  /** What the key is for, e.g. `github-actions` or `otel-collector` */
  @ApiProperty({ example: 'github-actions', minLength: 1, maxLength: 100 })
  @Trim()
  @IsDefined({ message: 'name is required' })
  @IsString()
  @MaxLength(100)
  @Matches(/^\S.{0,99}$/s, { message: 'name must be 1 to 100 characters' })
  name: string;

  /** The key's role in the workspace: at most your own. It acts with the lower of this and your role at the time of each call. */
  @ApiProperty({ enum: WORKSPACE_ROLES, example: 'member' })
  @IsDefined({ message: 'role is required' })
  @IsIn(WORKSPACE_ROLES, { message: `role must be one of ${WORKSPACE_ROLES.join(', ')}` })
  role: WorkspaceRole;

  /** When the key stops working (ISO 8601 date-time in the future); without it the key works until revoked */
  @ApiPropertyOptional({ type: 'string', format: 'date-time', example: '2027-06-30T00:00:00Z' })
  @ValidateIfPresent()
  @MaxLength(64)
  @IsISO8601({ strict: true, strictSeparator: true }, { message: 'expires_at must be an ISO 8601 date-time' })
  expires_at?: string;
}

export class ListApiKeysQuery extends PageQueryDto {
  /** `active` (default), `expired`, `revoked` or `all` */
  @ApiPropertyOptional({ enum: API_KEY_STATUSES, default: 'active' })
  @IsOptional()
  @IsIn(API_KEY_STATUSES)
  status: ApiKeyStatusFilter = 'active';

  /** Case-insensitive substring of the name */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  q?: string;
}

/** An API key's metadata: never the key itself, which only the create answer shows. */
export class ApiKeyResponse {
  @ApiProperty({ format: 'uuid', example: '5b0f6a3e-2f4c-4d7e-9a51-0c8e2b7d1f44' })
  id: string;
  @ApiProperty({ format: 'uuid', example: '0d6c1f0e-8a8b-4f57-b1e4-6d7b6a1c2e90' })
  workspace_id: string;
  @ApiProperty({ example: 'github-actions' })
  name: string;
  /** The key's first characters (`ews_<prefix>`), to recognise it in logs and settings */
  @ApiProperty({ example: 'ews_8f3a2c91d07b' })
  prefix: string;
  @ApiProperty({ enum: WORKSPACE_ROLES, example: 'member' })
  role: WorkspaceRole;
  /** `active`, `expired` or `revoked` */
  @ApiProperty({ enum: ['active', 'expired', 'revoked'], example: 'active' })
  status: 'active' | 'expired' | 'revoked';
  /** The user the key acts for */
  @ApiProperty({ format: 'uuid', example: '3c2d7f7a-9d1e-4b8a-8f0e-2a4b6c8d0e12' })
  created_by: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: '2027-06-30T00:00:00.000Z' })
  expires_at: Date | null;
  /** The last call made with it (updated at most once a minute) */
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: '2026-11-24T09:12:44.000Z' })
  last_used_at: Date | null;
  @ApiProperty({ type: 'string', nullable: true, example: '10.0.4.17' })
  last_used_ip: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  revoked_at: Date | null;
  /** `revoked` (DELETE), `member_removed` or `user_deactivated` */
  @ApiProperty({ type: 'string', nullable: true, example: null })
  revoked_reason: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', example: '2026-11-24T08:00:00.000Z' })
  created_at: Date;
}

/** The new key's metadata and, this once, the key. */
export class ApiKeyCreatedResponse extends ApiKeyResponse {
  /** The key, shown only in this answer: send it as `Authorization: Bearer <key>` */
  @ApiProperty({ example: 'ews_8f3a2c91d07b_Qm9vdHN0cmFwLWtleS1leGFtcGxlLW5vdC1yZWFsLTEyMzQ' })
  key: string;
}
