import { Body, Controller, Get, HttpCode, Post, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { PutTraceLiveSettingsRequest, TraceLiveStreamResponse } from './dto/live.dto.js';
import { LiveStreamsService } from './live-streams.service.js';

const DATASET = { resource: 'dataset', param: 'dataset_id' } as const;

/** A trace dataset's live stream (spans exported to POST /v1/traces): its open head version and sealing window. An addition beside the specification. */
@ApiTags('traces')
@Controller('traces/datasets/:dataset_id')
export class LiveStreamsController {
  constructor(private readonly streams: LiveStreamsService) {}

  /** The live stream: open head version, when it seals, spans pending and landed; the defaults before the first span (viewers). */
  @Get('live')
  @ApiOperation({ operationId: 'getTraceLiveStream' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: TraceLiveStreamResponse })
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
  ): Promise<TraceLiveStreamResponse> {
    return this.streams.get(access, datasetId);
  }

  /** Sets how long (window_seconds) and how large (max_spans) a head version grows before it is sealed; creates the stream before its first span (members). */
  @Put('live')
  @ApiOperation({ operationId: 'setTraceLiveStream' })
  @WorkspaceRoleRequired('member', DATASET)
  @ApiOkResponse({ type: TraceLiveStreamResponse })
  configure(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @Body() body: PutTraceLiveSettingsRequest,
    @CurrentUser() caller: Principal,
  ): Promise<TraceLiveStreamResponse> {
    return this.streams.configure(access, datasetId, body, caller);
  }

  /** Seals the open head version now (its statistics and enrichment are computed); the next span opens a new one. Nothing to seal is not an error (members). */
  @Post('live\\:seal')
  @HttpCode(200)
  @ApiOperation({ operationId: 'sealTraceLiveStream' })
  @WorkspaceRoleRequired('member', DATASET)
  @ApiOkResponse({ type: TraceLiveStreamResponse })
  seal(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @CurrentUser() caller: Principal,
  ): Promise<TraceLiveStreamResponse> {
    return this.streams.seal(access, datasetId, caller);
  }
}
