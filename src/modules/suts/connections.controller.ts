import { Body, Controller, Delete, Get, HttpCode, Patch, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
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
import { ConnectionsService } from './connections.service.js';
import {
  AdapterResponse,
  AdapterValidateResult,
  ConnectionTestRequest,
  ConnectionTestResult,
  CreateAdapterRequest,
  ValidateAdapterRequest,
} from './dto/adapter.dto.js';
import { ConnectionResponse, CreateConnectionRequest, UpdateConnectionRequest } from './dto/connection.dto.js';
import { SUT } from './suts.controller.js';

@ApiTags('suts')
@Controller('suts/:sut_id/connections')
export class ConnectionsController {
  constructor(private readonly connections: ConnectionsService) {}

  /** The system's connections with their limits and the adapter revision in force (viewers). */
  @Get()
  @ApiOperation({ operationId: 'listSutConnections' })
  @WorkspaceRoleRequired('viewer', SUT)
  @ApiOkResponse({ type: [ConnectionResponse] })
  list(@CurrentWorkspace() access: WorkspaceAccess, @UuidParam('sut_id') sutId: string): Promise<ConnectionResponse[]> {
    return this.connections.list(access, sutId);
  }

  /** Adds a connection (members; naming a secret in `auth` is for admins). */
  @Post()
  @ApiOperation({ operationId: 'createSutConnection' })
  @WorkspaceRoleRequired('member', SUT)
  @ApiCreatedResponse({ type: ConnectionResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'connection_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('sut_id') sutId: string,
    @Body() body: CreateConnectionRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ConnectionResponse> {
    return this.connections.create(access, sutId, body, caller);
  }

  /** Changes a connection (members; setting a secret, or pointing a connection that sends one elsewhere, is for admins). */
  @Patch(':connection_id')
  @ApiOperation({ operationId: 'updateSutConnection' })
  @WorkspaceRoleRequired('member', SUT)
  @ApiOkResponse({ type: ConnectionResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'connection_name_taken' })
  update(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('sut_id') sutId: string,
    @UuidParam('connection_id') id: string,
    @Body() body: UpdateConnectionRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ConnectionResponse> {
    return this.connections.update(access, sutId, id, body, caller);
  }

  /** Deletes a connection with its adapter revisions (members). */
  @Delete(':connection_id')
  @ApiOperation({ operationId: 'deleteSutConnection' })
  @HttpCode(204)
  @WorkspaceRoleRequired('member', SUT)
  @ApiNoContentResponse({ description: 'Deleted' })
  async delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('sut_id') sutId: string,
    @UuidParam('connection_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.connections.delete(access, sutId, id, caller);
  }

  /** The adapter in force: the newest revision, or the kind's default (revision 0) (viewers). */
  @Get(':connection_id/adapter')
  @ApiOperation({ operationId: 'getConnectionAdapter' })
  @WorkspaceRoleRequired('viewer', SUT)
  @ApiOkResponse({ type: AdapterResponse })
  getAdapter(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('sut_id') sutId: string,
    @UuidParam('connection_id') id: string,
  ): Promise<AdapterResponse> {
    return this.connections.getAdapter(access, sutId, id);
  }

  /** Adds an adapter revision after checking every template and path (members); 400 adapter_invalid lists each problem with a JSON Pointer. */
  @Post(':connection_id/adapter')
  @ApiOperation({ operationId: 'createConnectionAdapter' })
  @WorkspaceRoleRequired('member', SUT)
  @ApiCreatedResponse({ type: AdapterResponse })
  createAdapter(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('sut_id') sutId: string,
    @UuidParam('connection_id') id: string,
    @Body() body: CreateAdapterRequest,
    @CurrentUser() caller: Principal,
  ): Promise<AdapterResponse> {
    return this.connections.createAdapter(access, sutId, id, body, caller);
  }

  /** Dry run (members): renders the request for a sample row and extracts from a sample response, calling nothing; problems come back as `issues`. */
  @Post(':connection_id/adapter/validate')
  @ApiOperation({ operationId: 'validateConnectionAdapter' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', SUT)
  @ApiOkResponse({ type: AdapterValidateResult })
  @ApiBadRequestResponse({
    type: ProblemResponse,
    description: 'validation_failed, adapter_invalid (a template or path does not parse)',
  })
  validate(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('sut_id') sutId: string,
    @UuidParam('connection_id') id: string,
    @Body() body: ValidateAdapterRequest,
  ): Promise<AdapterValidateResult> {
    return this.connections.validate(access, sutId, id, body);
  }

  /** One real call through the connection and its adapter (members): status, latency, extracted output or the error. A failing SUT is a result, not an error of this call. */
  @Post(':connection_id/test')
  @ApiOperation({ operationId: 'testSutConnection' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', SUT)
  @ApiOkResponse({ type: ConnectionTestResult })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, connection_not_callable (offline)' })
  test(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('sut_id') sutId: string,
    @UuidParam('connection_id') id: string,
    @Body() body: ConnectionTestRequest,
  ): Promise<ConnectionTestResult> {
    return this.connections.test(access, sutId, id, body);
  }
}
