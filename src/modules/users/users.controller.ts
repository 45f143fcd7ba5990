import { Body, Controller, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPreconditionFailedResponse,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, SystemAdmin } from '#libs/auth/access.decorators.js';
import type { Principal } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import {
  CreateUserRequest,
  ListUsersQuery,
  ResetPasswordRequest,
  ResetTokenResponse,
  UpdateUserRequest,
  UserMembershipResponse,
  UserResponse,
} from './dto/user.dto.js';
import { UsersService } from './users.service.js';
import { IfMatch, WithETag } from '#libs/common/etag.decorators.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { userEtag } from './users.mapper.js';

@ApiTags('users')
@Controller('users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  /** Users of the service, filtered and sorted (system admins). */
  @Get()
  @ApiOperation({ operationId: 'listUsers' })
  @SystemAdmin()
  @ApiOkResponse({ type: PageOf(UserResponse) })
  list(@Query() query: ListUsersQuery): Promise<Page<UserResponse>> {
    return this.users.list(query);
  }

  /** Creates a user (system admins). Without a password, hand the user a reset token. */
  @Post()
  @ApiOperation({ operationId: 'createUser' })
  @SystemAdmin()
  @ApiCreatedResponse({ type: UserResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'email_taken' })
  create(@Body() body: CreateUserRequest, @CurrentUser() actor: Principal): Promise<UserResponse> {
    return this.users.create(body, actor);
  }

  /** A user (system admins, or the user itself). Carries an ETag for If-Match on PATCH. */
  @Get(':user_id')
  @ApiOperation({ operationId: 'getUser' })
  @SystemAdmin({ orSelf: 'user_id' })
  @ApiOkResponse({ type: UserResponse })
  @ApiNotFoundResponse({ type: ProblemResponse })
  @WithETag(userEtag)
  get(@UuidParam('user_id') id: string): Promise<UserResponse> {
    return this.users.get(id);
  }

  /** Changes email, display name or system role (system admins). Send If-Match to avoid overwriting. */
  @Patch(':user_id')
  @ApiOperation({ operationId: 'updateUser' })
  @SystemAdmin()
  @ApiOkResponse({ type: UserResponse })
  @ApiNotFoundResponse({ type: ProblemResponse })
  @ApiConflictResponse({
    type: ProblemResponse,
    description: 'email_taken, or last_admin when demoting the last active admin',
  })
  @ApiPreconditionFailedResponse({ type: ProblemResponse, description: 'If-Match does not match the current ETag' })
  @WithETag(userEtag)
  update(
    @UuidParam('user_id') id: string,
    @Body() body: UpdateUserRequest,
    @IfMatch() ifMatch: IfMatchPrecondition,
    @CurrentUser() actor: Principal,
  ): Promise<UserResponse> {
    return this.users.update(id, body, ifMatch, actor);
  }

  /** Deactivates the user and revokes every token they hold (system admins). */
  @Post(':user_id/deactivate')
  @ApiOperation({ operationId: 'deactivateUser' })
  @HttpCode(200)
  @SystemAdmin()
  @ApiOkResponse({ type: UserResponse })
  @ApiNotFoundResponse({ type: ProblemResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'self_deactivation or last_admin' })
  deactivate(@UuidParam('user_id') id: string, @CurrentUser() actor: Principal): Promise<UserResponse> {
    return this.users.deactivate(id, actor);
  }

  /** Lets a deactivated user log in again (system admins). */
  @Post(':user_id/reactivate')
  @ApiOperation({ operationId: 'reactivateUser' })
  @HttpCode(200)
  @SystemAdmin()
  @ApiOkResponse({ type: UserResponse })
  @ApiNotFoundResponse({ type: ProblemResponse })
  reactivate(@UuidParam('user_id') id: string, @CurrentUser() actor: Principal): Promise<UserResponse> {
    return this.users.reactivate(id, actor);
  }

  /** Sets a new password and revokes every token of the user (system admins). */
  @Post(':user_id/reset-password')
  @ApiOperation({ operationId: 'resetUserPassword' })
  @HttpCode(200)
  @SystemAdmin()
  @ApiOkResponse({ type: UserResponse })
  @ApiNotFoundResponse({ type: ProblemResponse })
  resetPassword(
    @UuidParam('user_id') id: string,
    @Body() body: ResetPasswordRequest,
    @CurrentUser() actor: Principal,
  ): Promise<UserResponse> {
    return this.users.resetPassword(id, body.password, actor);
  }

  /** Issues a one-time, expiring reset token, shown once (system admins). */
  @Post(':user_id/reset-token')
  @ApiOperation({ operationId: 'issueResetToken' })
  @HttpCode(200)
  @SystemAdmin()
  @ApiOkResponse({ type: ResetTokenResponse })
  @ApiNotFoundResponse({ type: ProblemResponse })
  resetToken(@UuidParam('user_id') id: string, @CurrentUser() actor: Principal): Promise<ResetTokenResponse> {
    return this.users.resetToken(id, actor);
  }

  /** The workspaces the user belongs to, with roles (system admins, or the user itself). */
  @Get(':user_id/memberships')
  @ApiOperation({ operationId: 'listUserMemberships' })
  @SystemAdmin({ orSelf: 'user_id' })
  @ApiOkResponse({ type: [UserMembershipResponse] })
  @ApiNotFoundResponse({ type: ProblemResponse })
  memberships(@UuidParam('user_id') id: string): Promise<UserMembershipResponse[]> {
    return this.users.memberships(id);
  }
}
