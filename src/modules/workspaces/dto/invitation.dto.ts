import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { WORKSPACE_ROLES, type WorkspaceRole } from '#libs/auth/roles.js';
import { PASSWORD_MAX } from '#libs/auth/password-hasher.js';
import type { InvitationState } from '../entities/workspace-invitation.entity.js';
import { EXAMPLE_AT, EXAMPLE_CREDENTIAL, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';

export const INVITATION_STATES = ['pending', 'accepted', 'revoked', 'expired'] as const;

export class ListInvitationsQuery {
  @ApiPropertyOptional({ enum: INVITATION_STATES })
  @IsOptional()
  @IsIn(INVITATION_STATES)
  state?: InvitationState;
}

export class CreateInvitationRequest {
  @ApiProperty({ example: EXAMPLE_NAME.memberEmail })
  @Trim()
  @IsEmail()
  @MaxLength(320)
  email: string;

  @ApiProperty({ enum: WORKSPACE_ROLES, example: 'member' })
  @IsIn(WORKSPACE_ROLES)
  role: WorkspaceRole;
}

export class AcceptInvitationRequest {
  /** The token from the invitation (shown once when it was created or resent) */
  @ApiProperty({ example: EXAMPLE_CREDENTIAL.invitationToken })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  token: string;

  /** For a new account; defaults to the email's local part */
  @ApiPropertyOptional({ example: EXAMPLE_NAME.member })
  @ValidateIfPresent()
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  display_name?: string;

  /** A new account's password; or, for an existing account without a bearer token, its current password */
  @ApiPropertyOptional({ example: EXAMPLE_CREDENTIAL.password })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(PASSWORD_MAX)
  password?: string;
}

export class InvitationResponse {
  @ApiProperty({ example: EXAMPLE_ID.invitation })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.memberEmail })
  email: string;
  @ApiProperty({ enum: WORKSPACE_ROLES, example: 'member' })
  role: WorkspaceRole;
  /** `expired` is a pending invitation past expires_at */
  @ApiProperty({ enum: INVITATION_STATES, example: 'pending' })
  state: InvitationState;
  @ApiProperty({ example: EXAMPLE_AT.expires })
  expires_at: Date;
  @ApiProperty({ example: EXAMPLE_ID.user })
  invited_by: string | null;
  @ApiProperty({ example: null })
  accepted_by: string | null;
  @ApiProperty({ example: null })
  accepted_at: Date | null;
  @ApiProperty({ example: null })
  revoked_at: Date | null;
  @ApiProperty({ example: 1 })
  sent_count: number;
  @ApiProperty({ example: EXAMPLE_AT.created })
  last_sent_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class CreateInvitationResponse extends InvitationResponse {
  /** Shown once: give it to the invitee (the service sends no email) */
  @ApiProperty({ example: EXAMPLE_CREDENTIAL.invitationToken })
  token: string;
  /** How the invitee accepts */
  @ApiProperty({
    example:
      'POST /auth/accept-invitation with {"token": "<token>", "password": "…"} (or with the invitee\'s bearer token)',
  })
  accept_path: string;
}
