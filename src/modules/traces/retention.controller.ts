import { Body, Controller, Delete, Get, HttpCode, Post, Put } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import {
  DatasetTraceRetentionResponse,
  PutTraceRetentionRequest,
  TraceRetentionResponse,
  TraceRetentionSweepResponse,
} from './dto/retention.dto.js';
import { TraceRetentionService } from './retention.service.js';

const WORKSPACE = { param: 'workspace_id' } as const;
const DATASET = { resource: 'dataset', param: 'dataset_id' } as const;

/** How long trace data is kept, per workspace and per trace dataset, and the sweep that removes what expired. An addition beside the specification. */
@ApiTags('traces')
@Controller()
export class RetentionController {
  constructor(private readonly retention: TraceRetentionService) {}

  /** The workspace's trace retention: its default and the datasets with their own (viewers). */
  @Get('workspaces/:workspace_id/trace-retention')
  @ApiOperation({ operationId: 'getTraceRetention' })
  @WorkspaceRoleRequired('viewer', WORKSPACE)
  @ApiOkResponse({ type: TraceRetentionResponse })
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('workspace_id') _workspaceId: string,
  ): Promise<TraceRetentionResponse> {
    return this.retention.getWorkspace(access);
  }

  /** Sets how many days the workspace keeps trace data (spans of datasets without their own setting, uploads, landing payloads); null keeps it forever (admins). */
  @Put('workspaces/:workspace_id/trace-retention')
  @ApiOperation({ operationId: 'setTraceRetention' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: TraceRetentionResponse })
  put(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('workspace_id') _workspaceId: string,
    @Body() body: PutTraceRetentionRequest,
    @CurrentUser() caller: Principal,
  ): Promise<TraceRetentionResponse> {
    return this.retention.putWorkspace(access, body.retention_days, caller);
  }

  /** Removes the workspace's expired trace data now, as the hourly sweep does, and says what went (admins). */
  @Post('workspaces/:workspace_id/trace-retention\\:sweep')
  @HttpCode(200)
  @ApiOperation({ operationId: 'sweepTraceRetention' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: TraceRetentionSweepResponse })
  sweep(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('workspace_id') _workspaceId: string,
  ): Promise<TraceRetentionSweepResponse> {
    return this.retention.sweepNow(access);
  }

  /** The trace dataset's retention: its own, or its workspace's (viewers). */
  @Get('traces/datasets/:dataset_id/retention')
  @ApiOperation({ operationId: 'getTraceDatasetRetention' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: DatasetTraceRetentionResponse })
  getDataset(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
  ): Promise<DatasetTraceRetentionResponse> {
    return this.retention.getDataset(access, datasetId);
  }

  /** Sets the trace dataset's own retention over the workspace's; null keeps its spans forever (admins). */
  @Put('traces/datasets/:dataset_id/retention')
  @ApiOperation({ operationId: 'setTraceDatasetRetention' })
  @WorkspaceRoleRequired('admin', DATASET)
  @ApiOkResponse({ type: DatasetTraceRetentionResponse })
  putDataset(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @Body() body: PutTraceRetentionRequest,
    @CurrentUser() caller: Principal,
  ): Promise<DatasetTraceRetentionResponse> {
    return this.retention.putDataset(access, datasetId, body.retention_days, caller);
  }

  /** Drops the dataset's own retention: it follows its workspace's again (admins). */
  @Delete('traces/datasets/:dataset_id/retention')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteTraceDatasetRetention' })
  @WorkspaceRoleRequired('admin', DATASET)
  @ApiNoContentResponse({ description: "The dataset follows its workspace's retention" })
  inherit(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    return this.retention.inherit(access, datasetId, caller);
  }
}
