import { ApiProperty } from '@nestjs/swagger';
import { IsEmail, IsIn, IsString, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../../../libs/auth/password-hasher.js';
import { SYSTEM_ROLES, type SystemRole } from '../../../../libs/auth/roles.js';
import { UserMembershipResponse, UserResponse } from '../../users/dto/user.dto.js';

// Optional, but never null: an explicit null is refused (400) rather than read as absent or written over a column.
const present = (_: object, value: unknown) => value !== undefined;

/**
 * Credentials for a token. JSON `{email, password}`, or the OAuth2 password form
 * (`grant_type=password&username=…&password=…`, what Swagger UI's Authorize sends), or a
 * one-time reset token: `{grant_type: "reset_token", reset_token, new_password}`.
 */
export class TokenRequest {
  /** `password` (default) or `reset_token` */
  @ValidateIf(present) @IsIn(['password', 'reset_token'])
  grant_type?: 'password' | 'reset_token';

  @ValidateIf(present) @IsEmail() @MaxLength(320)
  email?: string;

  /** OAuth2 form name for the email */
  @ValidateIf(present) @IsString() @MaxLength(320)
  username?: string;

  @ValidateIf(present) @IsString() @MaxLength(PASSWORD_MAX)
  password?: string;

  /** From POST /users/{user_id}/reset-token */
  @ValidateIf(present) @IsString() @MaxLength(200)
  reset_token?: string;

  @ValidateIf(present) @IsString() @MinLength(PASSWORD_MIN) @MaxLength(PASSWORD_MAX)
  new_password?: string;

  /** Ignored; accepted because OAuth2 clients send it. */
  @ValidateIf(present) @IsString() @MaxLength(1000)
  scope?: string;

  /** Ignored; accepted because OAuth2 clients send it. */
  @ValidateIf(present) @IsString() @MaxLength(200)
  client_id?: string;

  /** Ignored; accepted because OAuth2 clients send it. */
  @ValidateIf(present) @IsString() @MaxLength(200)
  client_secret?: string;
}

export class TokenResponse {
  /** Send as `Authorization: Bearer <access_token>` */
  access_token: string;
  @ApiProperty({ enum: ['bearer'] })
  token_type: 'bearer';
  /** Seconds until the token expires */
  expires_in: number;
  expires_at: Date;
  user_id: string;
}

/** The caller's account (a UserResponse) with their memberships. */
export class MeResponse extends UserResponse {
  memberships: UserMembershipResponse[];
  /** When the token used for this call expires (absent when answering accept-invitation without a token). */
  token_expires_at?: Date;
}

export class VerifyRequest {
  /** The bearer token to check */
  @IsString() @MinLength(1) @MaxLength(4096)
  token: string;
}

export class VerifyResponse {
  /** Always true: an invalid token is a 401 */
  active: true;
  user_id: string;
  email: string;
  display_name: string;
  @ApiProperty({ enum: SYSTEM_ROLES })
  system_role: SystemRole;
  token_id: string;
  expires_at: Date;
  memberships: UserMembershipResponse[];
}
