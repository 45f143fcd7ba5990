import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsIn, IsString, MaxLength, MinLength } from 'class-validator';
import { PASSWORD_MAX, PASSWORD_MIN } from '#libs/auth/password-hasher.js';
import { SYSTEM_ROLES, type SystemRole } from '#libs/auth/roles.js';
import { UserMembershipResponse, UserResponse } from '../../users/dto/user.dto.js';
import {
  ApiSchemaExample,
  EXAMPLE_AT,
  EXAMPLE_CREDENTIAL,
  EXAMPLE_ID,
  EXAMPLE_NAME,
} from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

/**
 * Credentials for a token. JSON `{email, password}`, or the OAuth2 password form
 * (`grant_type=password&username=…&password=…`, what Swagger UI's Authorize sends), or a
 * one-time reset token: `{grant_type: "reset_token", reset_token, new_password}`.
 */
@ApiSchemaExample({ grant_type: 'password', email: EXAMPLE_NAME.userEmail, password: EXAMPLE_CREDENTIAL.password })
export class TokenRequest {
  /** `password` (default) or `reset_token` */
  @ApiPropertyOptional({ example: 'password' })
  @ValidateIfPresent()
  @IsIn(['password', 'reset_token'])
  grant_type?: 'password' | 'reset_token';

  @ApiPropertyOptional({ example: EXAMPLE_NAME.userEmail })
  @ValidateIfPresent()
  @IsEmail()
  @MaxLength(320)
  email?: string;

  /** OAuth2 form name for the email */
  @ApiPropertyOptional({ example: EXAMPLE_NAME.userEmail })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(320)
  username?: string;

  @ApiPropertyOptional({ example: EXAMPLE_CREDENTIAL.password })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(PASSWORD_MAX)
  password?: string;

  /** From POST /users/{user_id}/reset-token */
  @ApiPropertyOptional({ example: EXAMPLE_CREDENTIAL.resetToken })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  reset_token?: string;

  @ApiPropertyOptional({ example: EXAMPLE_CREDENTIAL.newPassword })
  @ValidateIfPresent()
  @IsString()
  @MinLength(PASSWORD_MIN)
  @MaxLength(PASSWORD_MAX)
  new_password?: string;

  /** Ignored; accepted because OAuth2 clients send it. */
  @ApiPropertyOptional({ example: 'profile' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(1000)
  scope?: string;

  /** Ignored; accepted because OAuth2 clients send it. */
  @ApiPropertyOptional({ example: 'swagger-ui' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  client_id?: string;

  /** Ignored; accepted because OAuth2 clients send it. */
  @ApiPropertyOptional({ example: 'not-used' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  client_secret?: string;
}

export class TokenResponse {
  /** Send as `Authorization: Bearer <access_token>` */
  @ApiProperty({ example: EXAMPLE_CREDENTIAL.accessToken })
  access_token: string;
  @ApiProperty({ enum: ['bearer'], example: 'bearer' })
  token_type: 'bearer';
  /** Seconds until the token expires */
  @ApiProperty({ example: 3600 })
  expires_in: number;
  @ApiProperty({ example: EXAMPLE_AT.tokenExpires })
  expires_at: Date;
  @ApiProperty({ example: EXAMPLE_ID.user })
  user_id: string;
}

/** The caller's account (a UserResponse) with their memberships. */
export class MeResponse extends UserResponse {
  memberships: UserMembershipResponse[];
  /** When the token used for this call expires (absent when answering accept-invitation without a token). */
  @ApiPropertyOptional({ example: EXAMPLE_AT.tokenExpires })
  token_expires_at?: Date;
}

export class VerifyRequest {
  /** The bearer token to check */
  @ApiProperty({ example: EXAMPLE_CREDENTIAL.accessToken })
  @IsString()
  @MinLength(1)
  @MaxLength(4096)
  token: string;
}

export class VerifyResponse {
  /** Always true: an invalid token is a 401 */
  @ApiProperty({ example: true })
  active: true;
  @ApiProperty({ example: EXAMPLE_ID.user })
  user_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.userEmail })
  email: string;
  @ApiProperty({ example: EXAMPLE_NAME.user })
  display_name: string;
  @ApiProperty({ enum: SYSTEM_ROLES, example: 'user' })
  system_role: SystemRole;
  @ApiProperty({ example: EXAMPLE_ID.token })
  token_id: string;
  @ApiProperty({ example: EXAMPLE_AT.tokenExpires })
  expires_at: Date;
  memberships: UserMembershipResponse[];
}
