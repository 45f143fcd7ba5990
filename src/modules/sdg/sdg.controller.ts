import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { AcceptedAt } from '#libs/queue/accepted.decorator.js';
import {
  CreateSdgAdapterRequest,
  ListSdgAdaptersQuery,
  SdgAdapterResponse,
  SdgRunResponse,
  StartSdgRunRequest,
} from './dto/sdg.dto.js';
import { SdgService } from './sdg.service.js';

const ADAPTER = { resource: 'sdg_adapter', param: 'adapter_id' } as const;

@ApiTags('synthetic data')
@Controller('sdg/adapters')
export class SdgController {
  constructor(private readonly sdg: SdgService) {}

  /** The workspace's SDG adapters with their latest runs (viewers). */
  @Get()
  @ApiOperation({ operationId: 'listSdgAdapters' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: PageOf(SdgAdapterResponse) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ListSdgAdaptersQuery,
  ): Promise<Page<SdgAdapterResponse>> {
    return this.sdg.list(access, query);
  }

  /** Adds an adapter (members): templates over seed rows and dimension values, or an LLM prompt through a judge connection. */
  @Post()
  @ApiOperation({ operationId: 'createSdgAdapter' })
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: SdgAdapterResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'sdg_adapter_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateSdgAdapterRequest,
    @CurrentUser() caller: Principal,
  ): Promise<SdgAdapterResponse> {
    return this.sdg.create(access, body, caller);
  }

  /** One adapter with its latest runs (viewers): poll it for a run's state. */
  @Get(':adapter_id')
  @ApiOperation({ operationId: 'getSdgAdapter' })
  @WorkspaceRoleRequired('viewer', ADAPTER)
  @ApiOkResponse({ type: SdgAdapterResponse })
  get(@CurrentWorkspace() access: WorkspaceAccess, @UuidParam('adapter_id') id: string): Promise<SdgAdapterResponse> {
    return this.sdg.get(access, id);
  }

  /** Generates rows into a new candidate version of the target dataset (members, 202); existing versions are never touched. */
  @Post(':adapter_id/runs')
  @ApiOperation({ operationId: 'startSdgRun' })
  @WorkspaceRoleRequired('member', ADAPTER)
  @AcceptedAt({ type: SdgRunResponse, location: (run) => `/sdg/adapters/${run.adapter_id}/runs/${run.id}` })
  startRun(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('adapter_id') id: string,
    @Body() body: StartSdgRunRequest,
    @CurrentUser() caller: Principal,
  ): Promise<SdgRunResponse> {
    return this.sdg.startRun(access, id, body, caller);
  }

  /** One run of the adapter (viewers): poll it until `succeeded` (then `version_id` is the candidate version) or `failed`. The Location of POST …/runs. */
  @Get(':adapter_id/runs/:run_id')
  @ApiOperation({ operationId: 'getSdgRun' })
  @WorkspaceRoleRequired('viewer', ADAPTER)
  @ApiOkResponse({ type: SdgRunResponse })
  getRun(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('adapter_id') id: string,
    @UuidParam('run_id') runId: string,
  ): Promise<SdgRunResponse> {
    return this.sdg.getRun(access, id, runId);
  }
}
