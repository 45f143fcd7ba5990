import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import {
  DeleteTraceTagsQuery,
  EnrichmentResultsQuery,
  PutTraceTagsRequest,
  RecomputeEnrichmentRequest,
  TopologyGraph,
  TopologyQuery,
  TraceEnrichmentStatusResponse,
  TraceTagResponse,
  TraceTagsQuery,
} from './dto/trace-data.dto.js';
import { TraceVersionsService } from './trace-versions.service.js';

const DATASET = { resource: 'dataset', param: 'dataset_id' } as const;

/** The trace views of a trace dataset's version: topology, enrichment and tags. */
@ApiTags('traces')
@Controller('datasets/:dataset_id/versions/:version_id')
export class TraceDataController {
  constructor(private readonly versions: TraceVersionsService) {}

  /** The graph of components (agents, tools, LLM calls, retrievers) from parent-child spans, with call counts, error rates and latency percentiles per node and edge (viewers). */
  @Get('topology')
  @ApiOperation({ operationId: 'getTraceTopology' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: TopologyGraph })
  topology(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @Query() query: TopologyQuery,
  ): Promise<TopologyGraph> {
    return this.versions.topology(access, datasetId, versionId, query.tag);
  }

  /** Progress of the version's per-trace enrichment (computed after each landing and on recompute) and the fields it derives (viewers). */
  @Get('trace-enrichment')
  @ApiOperation({ operationId: 'getTraceEnrichment' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: TraceEnrichmentStatusResponse })
  enrichment(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
  ): Promise<TraceEnrichmentStatusResponse> {
    return this.versions.enrichmentStatus(access, datasetId, versionId);
  }

  /** Per-trace enrichment results, filtered (errors, loops, model, tag, duration, cost), sorted and paged (viewers). */
  @Get('trace-enrichment/results')
  @ApiOperation({ operationId: 'listTraceEnrichmentResults' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ schema: { type: 'object', additionalProperties: true } })
  results(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @Query() query: EnrichmentResultsQuery,
  ): Promise<Record<string, unknown>> {
    return this.versions.enrichmentResults(access, datasetId, versionId, query);
  }

  /** Queues a new enrichment of the version, optionally with model prices over the built-in table (members). */
  @Post('trace-enrichment\\:recompute')
  @ApiOperation({ operationId: 'recomputeTraceEnrichment' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', DATASET)
  @ApiOkResponse({ type: TraceEnrichmentStatusResponse })
  recompute(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @Body() body: RecomputeEnrichmentRequest,
    @CurrentUser() caller: Principal,
  ): Promise<TraceEnrichmentStatusResponse> {
    return this.versions.recompute(access, datasetId, versionId, body, caller);
  }

  /** Tags on the version's traces, by trace then tag (viewers). */
  @Get('trace-tags')
  @ApiOperation({ operationId: 'listTraceTags' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: [TraceTagResponse] })
  listTags(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @Query() query: TraceTagsQuery,
  ): Promise<TraceTagResponse[]> {
    return this.versions.listTags(access, datasetId, versionId, query);
  }

  /** Adds tags to traces (or, with mode `replace`, sets their tags); answers the traces' tags (members). */
  @Put('trace-tags')
  @ApiOperation({ operationId: 'tagTraces' })
  @WorkspaceRoleRequired('member', DATASET)
  @ApiOkResponse({ type: [TraceTagResponse] })
  putTags(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @Body() body: PutTraceTagsRequest,
    @CurrentUser() caller: Principal,
  ): Promise<TraceTagResponse[]> {
    return this.versions.putTags(access, datasetId, versionId, body, caller);
  }

  /** Removes a trace's tags, a tag from every trace, or one tag from one trace (members). */
  @Delete('trace-tags')
  @ApiOperation({ operationId: 'untagTraces' })
  @HttpCode(204)
  @WorkspaceRoleRequired('member', DATASET)
  @ApiNoContentResponse()
  deleteTags(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @Query() query: DeleteTraceTagsQuery,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    return this.versions.deleteTags(access, datasetId, versionId, query, caller);
  }
}
