import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { SYSTEM_ROLES, WORKSPACE_ROLES, type SystemRole, type WorkspaceRole } from '#libs/auth/roles.js';
import { PageQueryDto } from '#libs/common/pagination.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '#libs/auth/password-hasher.js';
import { EXAMPLE_AT, EXAMPLE_CREDENTIAL, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';

export const USER_SORTS = ['created_at', '-created_at', 'email', '-email', 'display_name', '-display_name'] as const;

export class ListUsersQuery extends PageQueryDto {
  /** Case-insensitive substring of the email or display name */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  q?: string;

  @ApiPropertyOptional({ enum: ['active', 'deactivated'] })
  @IsOptional()
  @IsIn(['active', 'deactivated'])
  status?: 'active' | 'deactivated';

  @ApiPropertyOptional({ enum: SYSTEM_ROLES })
  @IsOptional()
  @IsIn(SYSTEM_ROLES)
  system_role?: SystemRole;

  @ApiPropertyOptional({ enum: USER_SORTS, default: 'email' })
  @IsOptional()
  @IsIn(USER_SORTS)
  sort?: (typeof USER_SORTS)[number];
}

export class CreateUserRequest {
  @ApiProperty({ example: EXAMPLE_NAME.memberEmail })
  @Trim()
  @IsEmail()
  @MaxLength(320)
  email: string;

  @ApiProperty({ example: EXAMPLE_NAME.member })
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  display_name: string;

  /** Without one the user cannot log in until given a reset token (POST /users/{id}/reset-token). */
  @ApiPropertyOptional({ example: EXAMPLE_CREDENTIAL.password })
  @ValidateIfPresent()
  @IsString()
  @MinLength(PASSWORD_MIN)
  @MaxLength(PASSWORD_MAX)
  password?: string;

  @ApiPropertyOptional({ enum: SYSTEM_ROLES, default: 'user', example: 'user' })
  @ValidateIfPresent()
  @IsIn(SYSTEM_ROLES)
  system_role?: SystemRole;
}

export class UpdateUserRequest {
  @ApiPropertyOptional({ example: EXAMPLE_NAME.memberEmail })
  @ValidateIfPresent()
  @Trim()
  @IsEmail()
  @MaxLength(320)
  email?: string;

  @ApiPropertyOptional({ example: 'Grace B. Hopper' })
  @ValidateIfPresent()
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  display_name?: string;

  @ApiPropertyOptional({ enum: SYSTEM_ROLES, example: 'user' })
  @ValidateIfPresent()
  @IsIn(SYSTEM_ROLES)
  system_role?: SystemRole;
}

export class ResetPasswordRequest {
  @ApiProperty({ example: EXAMPLE_CREDENTIAL.newPassword })
  @IsString()
  @MinLength(PASSWORD_MIN)
  @MaxLength(PASSWORD_MAX)
  password: string;
}

export class UserResponse {
  @ApiProperty({ example: EXAMPLE_ID.user })
  id: string;
  @ApiProperty({ example: EXAMPLE_NAME.userEmail })
  email: string;
  @ApiProperty({ example: EXAMPLE_NAME.user })
  display_name: string;
  @ApiProperty({ enum: SYSTEM_ROLES, example: 'user' })
  system_role: SystemRole;
  @ApiProperty({ enum: ['active', 'deactivated'], example: 'active' })
  status: 'active' | 'deactivated';
  /** Whether a password is set (a user created without one logs in after redeeming a reset token) */
  @ApiProperty({ example: true })
  has_password: boolean;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  last_login_at: Date | null;
  @ApiProperty({ example: null })
  deactivated_at: Date | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
  /** Increments on every change; the ETag derives from it */
  @ApiProperty({ example: 3 })
  version: number;
}

export class ResetTokenResponse {
  @ApiProperty({ example: EXAMPLE_ID.member })
  user_id: string;
  /** Shown once. Redeem with POST /auth/token {"grant_type": "reset_token", "reset_token", "new_password"}. */
  @ApiProperty({ example: EXAMPLE_CREDENTIAL.resetToken })
  reset_token: string;
  @ApiProperty({ example: EXAMPLE_AT.tokenExpires })
  expires_at: Date;
  /** How to redeem the token */
  @ApiProperty({
    example:
      'POST /auth/token with {"grant_type": "reset_token", "reset_token": "<this token>", "new_password": "<8 to 256 characters>"}; it works once',
  })
  usage: string;
}

export class UserMembershipResponse {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.workspace })
  workspace_name: string;
  @ApiProperty({ enum: WORKSPACE_ROLES, example: 'owner' })
  role: WorkspaceRole;
  @ApiProperty({ example: EXAMPLE_AT.created })
  joined_at: Date;
}
