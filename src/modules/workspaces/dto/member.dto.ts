import { ApiProperty, ApiPropertyOptional, PickType } from '@nestjs/swagger';
import { CreateUserRequest } from '../../users/dto/user.dto.js';
import { Type } from 'class-transformer';
import { IsEmail, IsIn, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { WORKSPACE_ROLES, type WorkspaceRole } from '#libs/auth/roles.js';
import {
  ApiSchemaExample,
  EXAMPLE_AT,
  EXAMPLE_CREDENTIAL,
  EXAMPLE_ID,
  EXAMPLE_NAME,
} from '#libs/common/openapi-examples.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';

@ApiSchemaExample({ email: EXAMPLE_NAME.memberEmail, role: 'member' })
export class AddMemberRequest {
  /** The user to add; give this or `email` */
  @ApiPropertyOptional({ example: EXAMPLE_ID.member })
  @ValidateIfPresent()
  @IsUUID()
  user_id?: string;

  /** The email of an existing user (case-insensitive); give this or `user_id` */
  @ApiPropertyOptional({ example: EXAMPLE_NAME.memberEmail })
  @ValidateIfPresent()
  @Trim()
  @IsEmail()
  @MaxLength(320)
  email?: string;

  @ApiProperty({ enum: WORKSPACE_ROLES, example: 'member' })
  @IsIn(WORKSPACE_ROLES)
  role: WorkspaceRole;
}

export class ChangeMemberRoleRequest {
  @ApiProperty({ enum: WORKSPACE_ROLES, example: 'admin' })
  @IsIn(WORKSPACE_ROLES)
  role: WorkspaceRole;
}

/** The user fields of POST /users (without a system role), plus the workspace role. */
export class CreateWorkspaceUserRequest extends PickType(CreateUserRequest, [
  'email',
  'display_name',
  'password',
] as const) {
  @ApiProperty({ enum: WORKSPACE_ROLES, example: 'member' })
  @IsIn(WORKSPACE_ROLES)
  role: WorkspaceRole;
}

export class UserCandidatesQuery {
  /** Case-insensitive substring of the email or display name */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  q?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 50, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(50)
  limit: number = 20;
}

export class WorkspaceMemberResponse {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_ID.member })
  user_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.memberEmail })
  email: string;
  @ApiProperty({ example: EXAMPLE_NAME.member })
  display_name: string;
  @ApiProperty({ enum: WORKSPACE_ROLES, example: 'member' })
  role: WorkspaceRole;
  @ApiProperty({ enum: ['active', 'deactivated'], example: 'active' })
  user_status: 'active' | 'deactivated';
  /** When the user became a member */
  @ApiProperty({ example: EXAMPLE_AT.created })
  joined_at: Date;
  /** Who added the member (null when unknown, e.g. that user was deleted) */
  @ApiProperty({ example: EXAMPLE_ID.user })
  added_by: string | null;
  /**
   * Only when POST /workspaces/{id}/users created the user without a password: a one-time token,
   * shown once, that the user redeems at POST /auth/token (grant_type=reset_token) to set a password
   */
  @ApiPropertyOptional({ example: EXAMPLE_CREDENTIAL.resetToken })
  reset_token?: string;
  /** When `reset_token` stops working */
  @ApiPropertyOptional({ example: EXAMPLE_AT.tokenExpires })
  reset_token_expires_at?: Date;
}

export class WorkspaceUserCandidateResponse {
  @ApiProperty({ example: EXAMPLE_ID.member })
  id: string;
  @ApiProperty({ example: EXAMPLE_NAME.memberEmail })
  email: string;
  @ApiProperty({ example: EXAMPLE_NAME.member })
  display_name: string;
}
