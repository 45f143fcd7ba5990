import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsIn, IsOptional, IsString, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../../../../libs/auth/roles.js';
import { PASSWORD_MAX } from '../../../../libs/auth/password-hasher.js';
import type { InvitationState } from '../entities/workspace-invitation.entity.js';

// Optional, but never null: an explicit null is refused (400) rather than read as absent or written over a column.
const present = (_: object, value: unknown) => value !== undefined;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
export const INVITATION_STATES = ['pending', 'accepted', 'revoked', 'expired'] as const;

export class ListInvitationsQuery {
  @ApiPropertyOptional({ enum: INVITATION_STATES })
  @IsOptional() @IsIn(INVITATION_STATES)
  state?: InvitationState;
}

export class CreateInvitationRequest {
  @Transform(trim) @IsEmail() @MaxLength(320)
  email: string;

  @ApiProperty({ enum: WORKSPACE_ROLES })
  @IsIn(WORKSPACE_ROLES)
  role: WorkspaceRole;
}

export class AcceptInvitationRequest {
  /** The token from the invitation (shown once when it was created or resent) */
  @IsString() @MinLength(1) @MaxLength(200)
  token: string;

  /** For a new account; defaults to the email's local part */
  @ValidateIf(present) @Transform(trim) @IsString() @MinLength(1) @MaxLength(200)
  display_name?: string;

  /** A new account's password; or, for an existing account without a bearer token, its current password */
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(PASSWORD_MAX)
  password?: string;
}

export class InvitationResponse {
  id: string;
  workspace_id: string;
  email: string;
  @ApiProperty({ enum: WORKSPACE_ROLES })
  role: WorkspaceRole;
  /** `expired` is a pending invitation past expires_at */
  @ApiProperty({ enum: INVITATION_STATES })
  state: InvitationState;
  expires_at: Date;
  invited_by: string | null;
  accepted_by: string | null;
  accepted_at: Date | null;
  revoked_at: Date | null;
  sent_count: number;
  last_sent_at: Date;
  created_at: Date;
}

export class CreateInvitationResponse extends InvitationResponse {
  /** Shown once: give it to the invitee (the service sends no email) */
  token: string;
  /** How the invitee accepts */
  accept_path: string;
}
