import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Body, Controller, Get, Headers, HttpCode, Post, Put, Query, Res, UseInterceptors } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiConsumes,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { SseResponse } from '#libs/common/sse.js';
import { AcceptedAt } from '#libs/queue/accepted.decorator.js';
import { DiffService } from './results/diff.service.js';
import {
  DiffExportQuery,
  DiffQuery,
  DiffRowQuery,
  MetricDeltaDto,
  RunDiffResponse,
  RunDiffRowResponse,
} from './dto/diff.dto.js';
import { RunResultsQueryRequest, RunResultsQueryResponse, RunSessionResponse } from './dto/results.dto.js';
import {
  CreateRunRequest,
  EventsQuery,
  EventStreamQuery,
  ListRunsQuery,
  RerunRequest,
  RunEventResponse,
  RunResponse,
} from './dto/run.dto.js';
import { QueueQuery, RunQueueResponse } from './dto/queue.dto.js';
import { UploadOutputsRequest } from './dto/upload.dto.js';
import { NdjsonBodyInterceptor } from './ndjson-body.interceptor.js';
import { ResultsService } from './results/results.service.js';
import { RunEventStreams } from './run-event-streams.service.js';
import { ApiRunEventStream } from './run-event-stream.openapi.js';
import { RunQueueService } from './run-queue.service.js';
import { RunsService } from './runs.service.js';
import { RequestOrigin } from '#libs/common/file-answer.js';
import { RateLimitClass } from '#libs/auth/rate-limits.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

const RUN = { resource: 'run', param: 'run_id' } as const;
const BASE_RUN = { resource: 'run', query: 'base' } as const;
const RUN_LOCATION = (run: RunResponse) => `/runs/${run.id}`;
const OBJECT = { type: 'object', additionalProperties: true } as const;

@ApiTags('runs')
@ApiExtraModels(MetricDeltaDto)
@Controller('runs')
export class RunsController {
  constructor(
    private readonly runs: RunsService,
    private readonly results: ResultsService,
    private readonly diffs: DiffService,
    private readonly queue: RunQueueService,
    private readonly streams: RunEventStreams,
  ) {}

  /** Runs, newest first (viewers): of a workspace, or of every workspace you belong to; filter by SUT, dataset, state, tag. */
  @Get()
  @ApiOperation({ operationId: 'listRuns' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id', optional: true })
  @ApiOkResponse({ type: PageOf(RunResponse) })
  list(@Query() query: ListRunsQuery, @CurrentUser() caller: Principal): Promise<Page<RunResponse>> {
    return this.runs.list(caller, query);
  }

  /** Starts a run (members): the inputs are snapshotted, the metric config versions frozen, and the run queued (202); an offline connection waits for PUT .../upload. */
  @Post()
  @ApiOperation({ operationId: 'startRun' })
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @AcceptedAt({ type: RunResponse, location: RUN_LOCATION })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateRunRequest,
    @CurrentUser() caller: Principal,
  ): Promise<RunResponse> {
    return this.runs.create(access, body, caller);
  }

  /** Compares two runs of a workspace row by row (viewers): per metric deltas, regressions first. */
  @Get('diff')
  @ApiOperation({ operationId: 'getRunDiff' })
  @WorkspaceRoleRequired('viewer', BASE_RUN)
  @ApiOkResponse({ type: RunDiffResponse })
  diff(@CurrentWorkspace() access: WorkspaceAccess, @Query() query: DiffQuery): Promise<RunDiffResponse> {
    return this.diffs.diff(access, query);
  }

  /** The diff as a CSV (a line per row, base/candidate/delta per metric) or JSON file (viewers). */
  @Get('diff/export')
  @ApiOperation({ operationId: 'exportRunDiff' })
  @WorkspaceRoleRequired('viewer', BASE_RUN)
  @ApiOkResponse({
    description: 'The diff file: CSV (`format=csv`, the default) or JSON (`format=json`)',
    content: {
      'text/csv': {
        schema: {
          type: 'string',
          example:
            'row_id,status,base_passed,candidate_passed,output_changed,exact-match_base,exact-match_candidate,exact-match_delta\n' +
            'r-017,regressed,true,false,true,1,0,-1\n',
        },
      },
      'application/json': { schema: OBJECT },
    },
  })
  async export(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: DiffExportQuery,
    @Res() res: Response,
  ): Promise<void> {
    const file = await this.diffs.export(access, query, query.format ?? 'csv');
    res.status(200).setHeader('Content-Type', file.contentType);
    res.setHeader('Content-Disposition', `attachment; filename="${file.filename}"`);
    await pipeline(Readable.from(file.chunks), res);
  }

  /** One row side by side in both runs (viewers). */
  @Get('diff/row')
  @ApiOperation({ operationId: 'getRunDiffRow' })
  @WorkspaceRoleRequired('viewer', BASE_RUN)
  @ApiOkResponse({ type: RunDiffRowResponse })
  diffRow(@CurrentWorkspace() access: WorkspaceAccess, @Query() query: DiffRowQuery): Promise<RunDiffRowResponse> {
    return this.diffs.row(access, query);
  }

  /** One row side by side as a PNG image (viewers): status, input, expected output, both outputs with their verdicts, metric deltas. */
  @Get('diff/row/image')
  @ApiOperation({ operationId: 'getRunDiffRowImage' })
  @WorkspaceRoleRequired('viewer', BASE_RUN)
  @ApiProduces('image/png')
  @ApiOkResponse({ description: 'The PNG image', schema: { type: 'string', format: 'binary' } })
  async diffRowImage(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: DiffRowQuery,
    @Res() res: Response,
  ): Promise<void> {
    const png = await this.diffs.rowImage(access, query);
    res.status(200).setHeader('Content-Type', 'image/png');
    res.setHeader('Cache-Control', 'private, max-age=0');
    res.send(png);
  }

  /** What waits and what runs (viewers): queued and running runs of the workspace with their queue position and progress. */
  @Get('queue')
  @ApiOperation({ operationId: 'getRunQueue' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: RunQueueResponse })
  queueView(@CurrentWorkspace() access: WorkspaceAccess, @Query() _query: QueueQuery): Promise<RunQueueResponse> {
    return this.queue.view(access);
  }

  /** One run with its progress (viewers). */
  @Get(':run_id')
  @ApiOperation({ operationId: 'getRun' })
  @WorkspaceRoleRequired('viewer', RUN)
  @ApiOkResponse({ type: RunResponse })
  get(@CurrentWorkspace() access: WorkspaceAccess, @UuidParam('run_id') id: string): Promise<RunResponse> {
    return this.runs.get(access, id);
  }

  /** Where the run fails (viewers): failed rows by metric and by dimension value, worst first, and the most frequent errors. */
  @Get(':run_id/analysis')
  @ApiOperation({ operationId: 'getRunFailureAnalysis' })
  @WorkspaceRoleRequired('viewer', RUN)
  @ApiOkResponse({ schema: OBJECT })
  analysis(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') id: string,
  ): Promise<Record<string, unknown>> {
    return this.results.analysis(access, id);
  }

  /** Stops new calls at once (members); the run ends cancelled with what was done kept. */
  @Post(':run_id/cancel')
  @ApiOperation({ operationId: 'cancelRun' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', RUN)
  @ApiOkResponse({ type: RunResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'run_not_active' })
  cancel(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<RunResponse> {
    return this.runs.cancel(access, id, caller);
  }

  /** A new run with the same inputs (members): every row, or only those whose call failed, or those that failed (202). */
  @Post(':run_id/rerun')
  @ApiOperation({ operationId: 'rerun' })
  @WorkspaceRoleRequired('member', RUN)
  @AcceptedAt({ type: RunResponse, location: RUN_LOCATION })
  @ApiConflictResponse({ type: ProblemResponse, description: 'run_still_active, nothing_to_rerun' })
  rerun(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') id: string,
    @Body() body: RerunRequest,
    @CurrentUser() caller: Principal,
  ): Promise<RunResponse> {
    return this.runs.rerun(access, id, body, caller);
  }

  /** The outputs of an offline run, by row id (members): JSON `{results: [...]}` or JSON Lines (application/x-ndjson, one output object per line, scored at once); scoring is queued (202). */
  @Put(':run_id/upload')
  @ApiOperation({ operationId: 'uploadRunOutputs' })
  @RateLimitClass('ingestion')
  @UseInterceptors(NdjsonBodyInterceptor)
  @ApiConsumes('application/json', 'application/x-ndjson')
  @WorkspaceRoleRequired('member', RUN)
  @AcceptedAt({ type: RunResponse, location: RUN_LOCATION })
  @ApiConflictResponse({ type: ProblemResponse, description: 'run_not_awaiting_upload' })
  upload(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') id: string,
    @Body() body: UploadOutputsRequest,
    @CurrentUser() caller: Principal,
  ): Promise<RunResponse> {
    return this.runs.upload(access, id, body, caller);
  }

  /** The run's history in order (viewers): state changes, progress (done/total, rate, ETA), row and judge errors. Poll with `after`. */
  @Get(':run_id/events')
  @ApiOperation({ operationId: 'listRunEvents' })
  @WorkspaceRoleRequired('viewer', RUN)
  @ApiOkResponse({ type: [RunEventResponse] })
  events(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') id: string,
    @Query() query: EventsQuery,
  ): Promise<RunEventResponse[]> {
    return this.runs.events(access, id, query);
  }

  /** The run's events live as Server-Sent Events (viewers): the backlog after `Last-Event-ID` (or `after`), then each event as it is written, by whichever process runs it; ends after the terminal state. */
  @Get(':run_id/events/stream')
  @ApiOperation({ operationId: 'streamRunEvents' })
  @WorkspaceRoleRequired('viewer', RUN)
  @ApiRunEventStream()
  streamEvents(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') id: string,
    @Query() query: EventStreamQuery,
    @Headers('last-event-id') lastEventId: string | undefined,
    @CurrentUser() caller: Principal,
    @Res() res: Response,
  ): Promise<void> {
    return this.streams.serve(access, id, { after: query.after, lastEventId }, caller, new SseResponse(res));
  }

  /** A signed URL to the results as Parquet (viewers). */
  @Get(':run_id/parquet-url')
  @ApiOperation({ operationId: 'getRunParquetUrl' })
  @WorkspaceRoleRequired('viewer', RUN)
  @ApiOkResponse({ schema: OBJECT })
  async parquetUrl(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') id: string,
    @RequestOrigin() origin: string,
  ): Promise<Record<string, unknown>> {
    return this.results.parquetUrl(origin, access, await this.runs.require(access, id));
  }

  /** Results flattened for a table (viewers): the row's columns with `_output`, `_passed`, `_score.<metric>`; filtered and sorted in the query language. */
  @Post(':run_id/query')
  @ApiOperation({ operationId: 'queryRunTable' })
  @HttpCode(200)
  @WorkspaceRoleRequired('viewer', RUN)
  @ApiOkResponse({ schema: OBJECT })
  queryTable(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') id: string,
    @Body() body: RunResultsQueryRequest,
  ): Promise<Record<string, unknown>> {
    return this.results.queryTable(access, id, body);
  }

  /** Aggregates (viewers): per metric mean, pass rate and distribution, per dimension breakdown, latency, cost. */
  @Get(':run_id/results')
  @ApiOperation({ operationId: 'getRunResultsSummary' })
  @WorkspaceRoleRequired('viewer', RUN)
  @ApiOkResponse({ schema: OBJECT })
  resultsSummary(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') id: string,
  ): Promise<Record<string, unknown>> {
    return this.results.results(access, id);
  }

  /** Row results filtered, sorted and paged in the query language (viewers). */
  @Post(':run_id/results/query')
  @ApiOperation({ operationId: 'queryRunResults' })
  @HttpCode(200)
  @WorkspaceRoleRequired('viewer', RUN)
  @ApiOkResponse({ type: RunResultsQueryResponse })
  queryResults(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') id: string,
    @Body() body: RunResultsQueryRequest,
  ): Promise<RunResultsQueryResponse> {
    return this.results.queryResults(access, id, body);
  }

  /** A multi-turn conversation of the run in order (viewers). */
  @Get(':run_id/sessions/:parent_id')
  @ApiOperation({ operationId: 'getRunSession' })
  @WorkspaceRoleRequired('viewer', RUN)
  @ApiOkResponse({ type: RunSessionResponse })
  session(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') id: string,
    @TextParam('parent_id', PATH_TEXT.sessionId) sessionId: string,
  ): Promise<RunSessionResponse> {
    return this.results.session(access, id, sessionId);
  }
}
