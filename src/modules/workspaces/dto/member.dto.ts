import { ApiProperty, ApiPropertyOptional, PickType } from '@nestjs/swagger';
import { CreateUserRequest } from '../../users/dto/user.dto.js';
import { Transform, Type } from 'class-transformer';
import { IsEmail, IsIn, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../../../../libs/auth/roles.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
// Optional, but never null: `{"user_id": null}` is a 400, not "absent".
const present = (_: object, value: unknown) => value !== undefined;

export class AddMemberRequest {
  /** The user to add; give this or `email` */
  @ValidateIf(present) @IsUUID()
  user_id?: string;

  /** The email of an existing user (case-insensitive); give this or `user_id` */
  @ValidateIf(present) @Transform(trim) @IsEmail() @MaxLength(320)
  email?: string;

  @ApiProperty({ enum: WORKSPACE_ROLES })
  @IsIn(WORKSPACE_ROLES)
  role: WorkspaceRole;
}

export class ChangeMemberRoleRequest {
  @ApiProperty({ enum: WORKSPACE_ROLES })
  @IsIn(WORKSPACE_ROLES)
  role: WorkspaceRole;
}

/** The user fields of POST /users (without a system role), plus the workspace role. */
export class CreateWorkspaceUserRequest extends PickType(CreateUserRequest, ['email', 'display_name', 'password'] as const) {
  @ApiProperty({ enum: WORKSPACE_ROLES })
  @IsIn(WORKSPACE_ROLES)
  role: WorkspaceRole;
}

export class UserCandidatesQuery {
  /** Case-insensitive substring of the email or display name */
  @IsOptional() @IsString() @MaxLength(200)
  q?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 50, default: 20 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(50)
  limit: number = 20;
}

export class WorkspaceMemberResponse {
  workspace_id: string;
  user_id: string;
  email: string;
  display_name: string;
  @ApiProperty({ enum: WORKSPACE_ROLES })
  role: WorkspaceRole;
  @ApiProperty({ enum: ['active', 'deactivated'] })
  user_status: 'active' | 'deactivated';
  /** When the user became a member */
  joined_at: Date;
  /** Who added the member (null when unknown, e.g. that user was deleted) */
  added_by: string | null;
  /**
   * Only when POST /workspaces/{id}/users created the user without a password: a one-time token,
   * shown once, that the user redeems at POST /auth/token (grant_type=reset_token) to set a password
   */
  reset_token?: string;
  /** When `reset_token` stops working */
  reset_token_expires_at?: Date;
}

export class WorkspaceUserCandidateResponse {
  id: string;
  email: string;
  display_name: string;
}
