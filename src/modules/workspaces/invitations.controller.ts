import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import {
  CurrentUser,
  CurrentWorkspace,
  PublicWithOptionalUser,
  WorkspaceRoleRequired,
} from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { MeResponse } from '../auth/dto/auth.dto.js';
import {
  AcceptInvitationRequest,
  CreateInvitationRequest,
  CreateInvitationResponse,
  InvitationResponse,
  ListInvitationsQuery,
} from './dto/invitation.dto.js';
import { InvitationsService } from './invitations.service.js';
import { RateLimitClass } from '#libs/auth/rate-limits.js';

const WORKSPACE = { param: 'workspace_id' };

@ApiTags('invitations')
@Controller()
export class InvitationsController {
  constructor(private readonly invitations: InvitationsService) {}

  /** The workspace's invitations, newest first (admins). */
  @Get('workspaces/:workspace_id/invitations')
  @ApiOperation({ operationId: 'listInvitations' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: [InvitationResponse] })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ListInvitationsQuery,
  ): Promise<InvitationResponse[]> {
    return this.invitations.list(access, query);
  }

  /** Invites an email with a role (admins; owners for the owner role). The token is shown once. */
  @Post('workspaces/:workspace_id/invitations')
  @ApiOperation({ operationId: 'createInvitation' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiCreatedResponse({ type: CreateInvitationResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'already_member or invitation_pending' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateInvitationRequest,
    @CurrentUser() caller: Principal,
  ): Promise<CreateInvitationResponse> {
    return this.invitations.create(access, body, caller);
  }

  /** Issues a new token and expiry for a pending or expired invitation (admins); the old token stops working. */
  @Post('workspaces/:workspace_id/invitations/:invitation_id/resend')
  @ApiOperation({ operationId: 'resendInvitation' })
  @HttpCode(200)
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: CreateInvitationResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'invitation_not_pending' })
  resend(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('invitation_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<CreateInvitationResponse> {
    return this.invitations.resend(access, id, caller);
  }

  /** Revokes a pending or expired invitation (admins). */
  @Post('workspaces/:workspace_id/invitations/:invitation_id/revoke')
  @ApiOperation({ operationId: 'revokeInvitation' })
  @HttpCode(200)
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: InvitationResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'invitation_not_pending' })
  revoke(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('invitation_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<InvitationResponse> {
    return this.invitations.revoke(access, id, caller);
  }

  /**
   * Accepts an invitation. A new account is created with the given password; an existing
   * account proves itself with its bearer token or its password. Answers who you are now.
   */
  @Post('auth/accept-invitation')
  @ApiOperation({ operationId: 'acceptInvitation' })
  @RateLimitClass('login')
  @HttpCode(200)
  @PublicWithOptionalUser()
  @ApiOkResponse({ type: MeResponse })
  @ApiUnauthorizedResponse({
    type: ProblemResponse,
    description: 'Unknown token, or the existing account was not proven',
  })
  @ApiForbiddenResponse({
    type: ProblemResponse,
    description: 'Expired, revoked or used invitation, or a token of another user',
  })
  @ApiTooManyRequestsResponse({
    type: ProblemResponse,
    description: 'auth_busy: too many passwords being checked at once (only without a bearer token); see Retry-After',
  })
  accept(@Body() body: AcceptInvitationRequest, @CurrentUser() caller: Principal | undefined): Promise<MeResponse> {
    return this.invitations.accept(body, caller);
  }
}
