import { Body, Controller, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { CustomOpsService } from './custom-ops.service.js';
import {
  CustomOpDetailResponse,
  CustomOpPublishResponse,
  CustomOpRedeployResponse,
  CustomOpsListResponse,
  CustomOpStopResponse,
  ListCustomOpsQuery,
  PublishCustomOpRequest,
  RedeployCustomOpRequest,
  RegisterOpBody,
  RegistryOpView,
  StopCustomOpRequest,
} from './dto/ops.dto.js';
import { OpRegistry } from './op-registry.service.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

const WORKSPACE = { param: 'workspace_id' } as const;

@ApiTags('ops')
@Controller('workspaces/:workspace_id')
export class WorkspaceOpsController {
  constructor(
    private readonly registry: OpRegistry,
    private readonly customOps: CustomOpsService,
  ) {}

  /** Registers an op served by one of the workspace's custom ops (admins); POST /ops with workspace_id in the body does the same. */
  @Post('ops')
  @ApiOperation({ operationId: 'registerWorkspaceOp' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiCreatedResponse({ type: RegistryOpView })
  @ApiConflictResponse({ type: ProblemResponse, description: 'op_name_reserved, op_kind_change' })
  register(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: RegisterOpBody,
    @CurrentUser() caller: Principal,
  ): Promise<RegistryOpView> {
    return this.registry.register(access, body, caller);
  }

  /** The workspace's custom ops with their state (viewers). */
  @Get('custom_ops')
  @ApiOperation({ operationId: 'listCustomOps' })
  @WorkspaceRoleRequired('viewer', WORKSPACE)
  @ApiOkResponse({ type: CustomOpsListResponse })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ListCustomOpsQuery,
  ): Promise<CustomOpsListResponse> {
    return this.customOps.list(access, query);
  }

  /** Publishes an op backed by the workspace's HTTP endpoint (admins): it starts `deploying` and a queued health check makes it `active` or `failed`. */
  @Post('custom_ops')
  @ApiOperation({ operationId: 'publishCustomOp' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiCreatedResponse({ type: CustomOpPublishResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'custom_op_name_taken, op_name_reserved' })
  publish(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: PublishCustomOpRequest,
    @CurrentUser() caller: Principal,
  ): Promise<CustomOpPublishResponse> {
    return this.customOps.publish(access, body, caller);
  }

  /** One custom op with its revisions (newest first) and the ops it serves (viewers). */
  @Get('custom_ops/:name')
  @ApiOperation({ operationId: 'getCustomOp' })
  @WorkspaceRoleRequired('viewer', WORKSPACE)
  @ApiOkResponse({ type: CustomOpDetailResponse })
  detail(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('name', PATH_TEXT.name) name: string,
  ): Promise<CustomOpDetailResponse> {
    return this.customOps.detail(access, name);
  }

  /** Redeploys (admins): a new revision, health checked again. */
  @Patch('custom_ops/:name')
  @ApiOperation({ operationId: 'redeployCustomOp' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: CustomOpRedeployResponse })
  redeploy(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('name', PATH_TEXT.name) name: string,
    @Body() body: RedeployCustomOpRequest,
    @CurrentUser() caller: Principal,
  ): Promise<CustomOpRedeployResponse> {
    return this.customOps.redeploy(access, name, body, caller);
  }

  /** Stops the op (admins): runs can no longer use it; the reason is kept. */
  @Patch('custom_ops/:name/stop')
  @ApiOperation({ operationId: 'stopCustomOp' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: CustomOpStopResponse })
  stop(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('name', PATH_TEXT.name) name: string,
    @Body() body: StopCustomOpRequest,
    @CurrentUser() caller: Principal,
  ): Promise<CustomOpStopResponse> {
    return this.customOps.stop(access, name, body, caller);
  }
}
