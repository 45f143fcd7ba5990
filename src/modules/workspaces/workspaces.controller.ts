import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPreconditionFailedResponse,
  ApiTags,
} from '@nestjs/swagger';
import { Authenticated, CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import {
  CreateWorkspaceRequest,
  ListWorkspacesQuery,
  UpdateWorkspaceRequest,
  WorkspaceListItem,
  WorkspaceResponse,
} from './dto/workspace.dto.js';
import { WorkspacesService } from './workspaces.service.js';
import { IfMatch, WithETag } from '#libs/common/etag.decorators.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { workspaceEtag } from './workspaces.mapper.js';

const WORKSPACE = { param: 'workspace_id' };

@ApiTags('workspaces')
@Controller('workspaces')
export class WorkspacesController {
  constructor(private readonly workspaces: WorkspacesService) {}

  /** The caller's workspaces (system admins: all, or `mine=true`). */
  @Get()
  @ApiOperation({ operationId: 'listWorkspaces' })
  @Authenticated()
  @ApiOkResponse({ type: PageOf(WorkspaceListItem) })
  list(@Query() query: ListWorkspacesQuery, @CurrentUser() caller: Principal): Promise<Page<WorkspaceListItem>> {
    return this.workspaces.list(query, caller);
  }

  /** Creates a workspace; the caller becomes its owner. */
  @Post()
  @ApiOperation({ operationId: 'createWorkspace' })
  @Authenticated({ apiKeys: false })
  @ApiCreatedResponse({ type: WorkspaceResponse })
  @WithETag(workspaceEtag)
  create(@Body() body: CreateWorkspaceRequest, @CurrentUser() caller: Principal): Promise<WorkspaceResponse> {
    return this.workspaces.create(body, caller);
  }

  /** A workspace with the caller's role; carries an ETag for If-Match on PATCH. */
  @Get(':workspace_id')
  @ApiOperation({ operationId: 'getWorkspace' })
  @WorkspaceRoleRequired('viewer', WORKSPACE)
  @ApiOkResponse({ type: WorkspaceResponse })
  @WithETag(workspaceEtag)
  get(@CurrentWorkspace() access: WorkspaceAccess, @CurrentUser() caller: Principal): Promise<WorkspaceResponse> {
    return this.workspaces.get(access, caller);
  }

  /** Renames or re-describes the workspace (admins). Send If-Match to avoid overwriting. */
  @Patch(':workspace_id')
  @ApiOperation({ operationId: 'updateWorkspace' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: WorkspaceResponse })
  @ApiPreconditionFailedResponse({ type: ProblemResponse, description: 'If-Match does not match the current ETag' })
  @WithETag(workspaceEtag)
  update(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: UpdateWorkspaceRequest,
    @IfMatch() ifMatch: IfMatchPrecondition,
    @CurrentUser() caller: Principal,
  ): Promise<WorkspaceResponse> {
    return this.workspaces.update(access, body, ifMatch, caller);
  }

  /** Deletes the workspace and everything in it (owners). */
  @Delete(':workspace_id')
  @ApiOperation({ operationId: 'deleteWorkspace' })
  @HttpCode(204)
  @WorkspaceRoleRequired('owner', WORKSPACE)
  @ApiNoContentResponse({ description: 'Deleted' })
  async delete(@CurrentWorkspace() access: WorkspaceAccess, @CurrentUser() caller: Principal): Promise<void> {
    await this.workspaces.delete(access, caller);
  }
}
