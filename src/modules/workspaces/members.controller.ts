import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import {
  AddMemberRequest,
  ChangeMemberRoleRequest,
  CreateWorkspaceUserRequest,
  UserCandidatesQuery,
  WorkspaceMemberResponse,
  WorkspaceUserCandidateResponse,
} from './dto/member.dto.js';
import { MembersService } from './members.service.js';

const WORKSPACE = { param: 'workspace_id' };

@ApiTags('workspaces')
@Controller('workspaces/:workspace_id')
export class MembersController {
  constructor(private readonly members: MembersService) {}

  /** Members with their roles. */
  @Get('members')
  @ApiOperation({ operationId: 'listMembers' })
  @WorkspaceRoleRequired('viewer', WORKSPACE)
  @ApiOkResponse({ type: [WorkspaceMemberResponse] })
  list(@CurrentWorkspace() access: WorkspaceAccess): Promise<WorkspaceMemberResponse[]> {
    return this.members.list(access);
  }

  /** Adds an existing user by id or email (admins; only owners grant owner). */
  @Post('members')
  @ApiOperation({ operationId: 'addMember' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiCreatedResponse({ type: WorkspaceMemberResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'already_member or user_deactivated' })
  add(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: AddMemberRequest,
    @CurrentUser() caller: Principal,
  ): Promise<WorkspaceMemberResponse> {
    return this.members.add(access, body, caller);
  }

  /** Changes a member's role (admins; owners for anything touching the owner role). */
  @Patch('members/:user_id')
  @ApiOperation({ operationId: 'updateMemberRole' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: WorkspaceMemberResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'last_owner' })
  changeRole(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('user_id') userId: string,
    @Body() body: ChangeMemberRoleRequest,
    @CurrentUser() caller: Principal,
  ): Promise<WorkspaceMemberResponse> {
    return this.members.changeRole(access, userId, body.role, caller);
  }

  /** Removes a member (admins), or leaves (any member removing themselves). The last owner stays. */
  @Delete('members/:user_id')
  @ApiOperation({ operationId: 'removeMember' })
  @HttpCode(204)
  @WorkspaceRoleRequired('viewer', WORKSPACE)
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'last_owner' })
  async remove(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('user_id') userId: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.members.remove(access, userId, caller);
  }

  /** Creates a user straight into the workspace (admins). */
  @Post('users')
  @ApiOperation({ operationId: 'createWorkspaceUser' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiCreatedResponse({ type: WorkspaceMemberResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'email_taken: add the existing user as a member instead' })
  createUser(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateWorkspaceUserRequest,
    @CurrentUser() caller: Principal,
  ): Promise<WorkspaceMemberResponse> {
    return this.members.createUser(access, body, caller);
  }

  /** Active users who are not members yet, to pick from when adding (admins). */
  @Get('user-candidates')
  @ApiOperation({ operationId: 'listUserCandidates' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: [WorkspaceUserCandidateResponse] })
  candidates(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: UserCandidatesQuery,
  ): Promise<WorkspaceUserCandidateResponse[]> {
    return this.members.candidates(access, query);
  }
}
