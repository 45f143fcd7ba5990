import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsIn, IsOptional, IsString, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { SYSTEM_ROLES, WORKSPACE_ROLES, type SystemRole, type WorkspaceRole } from '../../../../libs/auth/roles.js';
import { PageQueryDto } from '../../../../libs/common/pagination.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../../../libs/auth/password-hasher.js';

// Optional, but never null: an explicit null is refused (400) rather than read as absent or written over a column.
const present = (_: object, value: unknown) => value !== undefined;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export const USER_SORTS = ['created_at', '-created_at', 'email', '-email', 'display_name', '-display_name'] as const;

export class ListUsersQuery extends PageQueryDto {
  /** Case-insensitive substring of the email or display name */
  @IsOptional() @IsString() @MaxLength(200)
  q?: string;

  @ApiPropertyOptional({ enum: ['active', 'deactivated'] })
  @IsOptional() @IsIn(['active', 'deactivated'])
  status?: 'active' | 'deactivated';

  @ApiPropertyOptional({ enum: SYSTEM_ROLES })
  @IsOptional() @IsIn(SYSTEM_ROLES)
  system_role?: SystemRole;

  @ApiPropertyOptional({ enum: USER_SORTS, default: 'email' })
  @IsOptional() @IsIn(USER_SORTS)
  sort?: (typeof USER_SORTS)[number];
}

export class CreateUserRequest {
  @Transform(trim) @IsEmail() @MaxLength(320)
  email: string;

  @Transform(trim) @IsString() @MinLength(1) @MaxLength(200)
  display_name: string;

  /** Without one the user cannot log in until given a reset token (POST /users/{id}/reset-token). */
  @ValidateIf(present) @IsString() @MinLength(PASSWORD_MIN) @MaxLength(PASSWORD_MAX)
  password?: string;

  @ApiPropertyOptional({ enum: SYSTEM_ROLES, default: 'user' })
  @ValidateIf(present) @IsIn(SYSTEM_ROLES)
  system_role?: SystemRole;
}

export class UpdateUserRequest {
  @ValidateIf(present) @Transform(trim) @IsEmail() @MaxLength(320)
  email?: string;

  @ValidateIf(present) @Transform(trim) @IsString() @MinLength(1) @MaxLength(200)
  display_name?: string;

  @ApiPropertyOptional({ enum: SYSTEM_ROLES })
  @ValidateIf(present) @IsIn(SYSTEM_ROLES)
  system_role?: SystemRole;
}

export class ResetPasswordRequest {
  @IsString() @MinLength(PASSWORD_MIN) @MaxLength(PASSWORD_MAX)
  password: string;
}

export class UserResponse {
  id: string;
  email: string;
  display_name: string;
  @ApiProperty({ enum: SYSTEM_ROLES })
  system_role: SystemRole;
  @ApiProperty({ enum: ['active', 'deactivated'] })
  status: 'active' | 'deactivated';
  /** Whether a password is set (a user created without one logs in after redeeming a reset token) */
  has_password: boolean;
  last_login_at: Date | null;
  deactivated_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** Increments on every change; the ETag derives from it */
  version: number;
}

export class ResetTokenResponse {
  user_id: string;
  /** Shown once. Redeem with POST /auth/token {"grant_type": "reset_token", "reset_token", "new_password"}. */
  reset_token: string;
  expires_at: Date;
  /** How to redeem the token */
  usage: string;
}

export class UserMembershipResponse {
  workspace_id: string;
  workspace_name: string;
  @ApiProperty({ enum: WORKSPACE_ROLES })
  role: WorkspaceRole;
  joined_at: Date;
}
