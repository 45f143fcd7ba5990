import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import {
  ListRegistryQuery,
  OpCatalogue,
  OpSchemaQuery,
  OpSchemaResponse,
  OpsWorkspaceQuery,
  RegisterOpRequest,
  RegistryListResponse,
  RegistryOpView,
} from './dto/ops.dto.js';
import { OpRegistry } from './op-registry.service.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

@ApiTags('ops')
@Controller('ops')
export class OpsController {
  constructor(private readonly registry: OpRegistry) {}

  /** What the workspace can use now, by kind: built-in metrics and checks, and registered ops whose custom op is active (viewers). */
  @Get()
  @ApiOperation({ operationId: 'listOps' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: OpCatalogue })
  catalogue(@CurrentWorkspace() access: WorkspaceAccess, @Query() _query: OpsWorkspaceQuery): Promise<OpCatalogue> {
    return this.registry.catalogue(access);
  }

  /** Registers an op served by one of the workspace's custom ops (admins); a name registered again gets a new version. */
  @Post()
  @ApiOperation({ operationId: 'registerOp' })
  @WorkspaceRoleRequired('admin', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: RegistryOpView })
  @ApiConflictResponse({ type: ProblemResponse, description: 'op_name_reserved, op_kind_change' })
  register(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: RegisterOpRequest,
    @CurrentUser() caller: Principal,
  ): Promise<RegistryOpView> {
    const { workspace_id: _workspace, ...op } = body;
    return this.registry.register(access, op, caller);
  }

  /** Every op, available or not, with its availability and schema; filter by kind and source (viewers). */
  @Get('registry')
  @ApiOperation({ operationId: 'listRegisteredOps' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: RegistryListResponse })
  list(@CurrentWorkspace() access: WorkspaceAccess, @Query() query: ListRegistryQuery): Promise<RegistryListResponse> {
    return this.registry.list(access, query);
  }

  /** One op by name (viewers). */
  @Get('registry/:name')
  @ApiOperation({ operationId: 'getRegisteredOp' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: RegistryOpView })
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('name', PATH_TEXT.name) name: string,
    @Query() _query: OpsWorkspaceQuery,
  ): Promise<RegistryOpView> {
    return this.registry.get(access, name);
  }

  /** The JSON Schema (draft-07) of an op's parameters, of its newest version or of `version` (viewers). */
  @Get(':name/schema')
  @ApiOperation({ operationId: 'getOpSchema' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: OpSchemaResponse })
  schema(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('name', PATH_TEXT.name) name: string,
    @Query() query: OpSchemaQuery,
  ): Promise<OpSchemaResponse> {
    return this.registry.schema(access, name, query.version);
  }
}
