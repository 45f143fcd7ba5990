import { Body, Controller, Get, HttpCode, Post, Query, UploadedFile, UseInterceptors } from '@nestjs/common';
import {
  ApiBody,
  ApiConflictResponse,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { FileUploadInterceptor } from '#libs/common/upload.interceptor.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { AcceptedAt } from '#libs/queue/accepted.decorator.js';
import type { UploadedFile as StoredUpload } from '../datasets/datasets.service.js';
import {
  CreateTraceConnectionRequest,
  DetectConventionsRequest,
  DetectUploadRequest,
  DropsQuery,
  LandFromConnectionRequest,
  LandInlineRequest,
  LandTracesRequest,
  TraceConventionDetectionResponse,
  TraceDropRecordResponse,
  TraceIngestRunDropsResponse,
  TraceIngestRunResponse,
  TraceSourceConnectionResponse,
  TraceUploadResponse,
  UploadTracesForm,
  WorkspaceQuery,
} from './dto/traces.dto.js';
import {
  CreateGroundTruthRequest,
  GroundTruthQuery,
  TraceCurrentVersionResponse,
  TraceGroundTruthResponse,
  TraceGroundTruthVersionResponse,
} from './dto/trace-data.dto.js';
import { TraceVersionsService } from './trace-versions.service.js';
import { TracesService } from './traces.service.js';
import { RateLimitClass } from '#libs/auth/rate-limits.js';

const CONNECTION = { resource: 'trace_connection', param: 'connection_id' } as const;
const UPLOAD = { resource: 'trace_upload', param: 'upload_id' } as const;
const INGEST_RUN = { resource: 'trace_ingest_run', param: 'run_id' } as const;
const VERSION = { resource: 'dataset_version', param: 'version_id' } as const;
const INGEST_RUN_LOCATION = (run: TraceIngestRunResponse) => `/traces/runs/${run.id}`;

@ApiTags('traces')
@Controller('traces')
export class TracesController {
  constructor(
    private readonly traces: TracesService,
    private readonly versions: TraceVersionsService,
  ) {}

  /** The workspace's trace source connections (viewers). */
  @Get('connections')
  @ApiOperation({ operationId: 'listTraceConnections' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: [TraceSourceConnectionResponse] })
  listConnections(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() _query: WorkspaceQuery,
  ): Promise<TraceSourceConnectionResponse[]> {
    return this.traces.listConnections(access);
  }

  /** Adds a source to pull traces from (members; naming a secret takes an admin): an OTLP file URL, a Langfuse-compatible or a Phoenix-compatible API. */
  @Post('connections')
  @ApiOperation({ operationId: 'createTraceConnection' })
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: TraceSourceConnectionResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'trace_connection_name_taken' })
  createConnection(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateTraceConnectionRequest,
    @CurrentUser() caller: Principal,
  ): Promise<TraceSourceConnectionResponse> {
    return this.traces.createConnection(access, body, caller);
  }

  /** Pulls the connection's traces (page by page) into a new version of a trace dataset, through the queue (members, 202): poll GET /traces/runs/{id}. */
  @Post('connections/:connection_id/land')
  @ApiOperation({ operationId: 'landTracesFromConnection' })
  @RateLimitClass('ingestion')
  @WorkspaceRoleRequired('member', CONNECTION)
  @AcceptedAt({ type: TraceIngestRunResponse, location: INGEST_RUN_LOCATION })
  landFromConnection(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('connection_id') id: string,
    @Body() body: LandFromConnectionRequest,
    @CurrentUser() caller: Principal,
  ): Promise<TraceIngestRunResponse> {
    return this.traces.landFromConnection(access, id, body, caller);
  }

  /** Which convention a sample of records follows, with a confidence, how each attribute maps onto the canonical span, and which attributes would be kept aside or dropped (viewers). Nothing is stored. */
  @Post('conventions\\:detect')
  @ApiOperation({ operationId: 'detectTraceConvention' })
  @HttpCode(200)
  @WorkspaceRoleRequired('viewer', { body: 'workspace_id' })
  @ApiOkResponse({ type: TraceConventionDetectionResponse })
  detect(@Body() body: DetectConventionsRequest): Promise<TraceConventionDetectionResponse> {
    return this.traces.detectRecords(body.records, body.sample);
  }

  /** Lands an upload or a connection's traces into a new version of a trace dataset, through the queue (members, 202); idempotent: spans already landed are not written again. */
  @Post('land')
  @ApiOperation({ operationId: 'landTraces' })
  @RateLimitClass('ingestion')
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @AcceptedAt({ type: TraceIngestRunResponse, location: INGEST_RUN_LOCATION })
  land(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: LandTracesRequest,
    @CurrentUser() caller: Principal,
  ): Promise<TraceIngestRunResponse> {
    return this.traces.land(access, body, caller);
  }

  /** Lands the records in the body (OTLP/JSON requests or span records, at most 10000), through the queue (members, 202). */
  @Post('land\\:inline')
  @ApiOperation({ operationId: 'landInlineTraces' })
  @RateLimitClass('ingestion')
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @AcceptedAt({ type: TraceIngestRunResponse, location: INGEST_RUN_LOCATION })
  landInline(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: LandInlineRequest,
    @CurrentUser() caller: Principal,
  ): Promise<TraceIngestRunResponse> {
    return this.traces.landInline(access, body, caller);
  }

  /** An ingest run: state, counts (received = landed + deduplicated + dropped), drops by reason, the version written (viewers). */
  @Get('runs/:run_id')
  @ApiOperation({ operationId: 'getTraceLandingRun' })
  @WorkspaceRoleRequired('viewer', INGEST_RUN)
  @ApiOkResponse({ type: TraceIngestRunResponse })
  getRun(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') id: string,
  ): Promise<TraceIngestRunResponse> {
    return this.traces.getRun(access, id);
  }

  /** The records the run could not normalise, each with its reason and original payload, in source order (viewers). */
  @Get('runs/:run_id/drops')
  @ApiOperation({ operationId: 'listTraceLandingRunDrops' })
  @WorkspaceRoleRequired('viewer', INGEST_RUN)
  @ApiOkResponse({ type: TraceIngestRunDropsResponse })
  runDrops(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') id: string,
    @Query() query: DropsQuery,
  ): Promise<TraceIngestRunDropsResponse> {
    return this.traces.runDrops(access, id, query);
  }

  /** Uploads a trace file (multipart, part `file`; streamed to disk, at most UPLOAD_MAX_BYTES) to detect and land (members). */
  @Post('uploads')
  @ApiOperation({ operationId: 'uploadTraceFile' })
  @RateLimitClass('ingestion')
  @WorkspaceRoleRequired('member', { query: 'workspace_id' })
  @UseInterceptors(FileUploadInterceptor)
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: UploadTracesForm })
  @ApiCreatedResponse({ type: TraceUploadResponse })
  @ApiPayloadTooLargeResponse({ type: ProblemResponse, description: 'payload_too_large (UPLOAD_MAX_BYTES)' })
  upload(
    @Query() _query: WorkspaceQuery,
    @CurrentWorkspace() access: WorkspaceAccess,
    @UploadedFile() file: StoredUpload | undefined,
    @CurrentUser() caller: Principal,
  ): Promise<TraceUploadResponse> {
    return this.traces.upload(access, file, caller);
  }

  /** Convention detection over the first spans of an upload (viewers). */
  @Post('uploads/:upload_id\\:detect')
  @ApiOperation({ operationId: 'detectTraceUploadConvention' })
  @HttpCode(200)
  @WorkspaceRoleRequired('viewer', UPLOAD)
  @ApiOkResponse({ type: TraceConventionDetectionResponse })
  detectUpload(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('upload_id') id: string,
    @Body() body: DetectUploadRequest,
  ): Promise<TraceConventionDetectionResponse> {
    return this.traces.detectUpload(access, id, body.sample);
  }

  /** Drops of the landings that wrote this version (viewers). */
  @Get('versions/:version_id/drops')
  @ApiOperation({ operationId: 'listTraceVersionDrops' })
  @WorkspaceRoleRequired('viewer', VERSION)
  @ApiOkResponse({ type: [TraceDropRecordResponse] })
  versionDrops(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('version_id') id: string,
    @Query() query: DropsQuery,
  ): Promise<TraceDropRecordResponse[]> {
    return this.versions.versionDrops(access, id, query);
  }

  /** The version's ground truth: the newest set of expected outputs (or `number`), with every version number (viewers). */
  @Get('versions/:version_id/ground-truth')
  @ApiOperation({ operationId: 'getTraceGroundTruth' })
  @WorkspaceRoleRequired('viewer', VERSION)
  @ApiOkResponse({ type: TraceGroundTruthResponse })
  @ApiNotFoundResponse({ type: ProblemResponse, description: 'ground_truth_not_found' })
  groundTruth(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('version_id') id: string,
    @Query() query: GroundTruthQuery,
  ): Promise<TraceGroundTruthResponse> {
    return this.versions.groundTruth(access, id, query.number);
  }

  /** Adds a new ground-truth version: expected outputs for traces of the version (members). */
  @Post('versions/:version_id/ground-truth')
  @ApiOperation({ operationId: 'createTraceGroundTruth' })
  @WorkspaceRoleRequired('member', VERSION)
  @ApiCreatedResponse({ type: TraceGroundTruthVersionResponse })
  createGroundTruth(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('version_id') id: string,
    @Body() body: CreateGroundTruthRequest,
    @CurrentUser() caller: Principal,
  ): Promise<TraceGroundTruthVersionResponse> {
    return this.versions.createGroundTruth(access, id, body, caller);
  }

  /** Makes the trace version its dataset's current version (members). */
  @Post('versions/:version_id\\:promote')
  @ApiOperation({ operationId: 'promoteTraceVersion' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', VERSION)
  @ApiOkResponse({ type: TraceCurrentVersionResponse })
  promote(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('version_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<TraceCurrentVersionResponse> {
    return this.versions.promote(access, id, caller);
  }
}
