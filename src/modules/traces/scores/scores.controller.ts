import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import { type Page, PageOf } from '#libs/common/pagination.js';
import {
  TraceScoreAggregateResponse,
  TraceScoreResponse,
  TraceScoresAggregateQuery,
  TraceScoresQuery,
} from '../dto/scores.dto.js';
import { TraceScoresService } from './scores.service.js';

/**
 * Scores of production traces that online evaluation keeps (docs/traces.md#scores): listed and
 * aggregated. An addition beside the specification.
 */
@ApiTags('traces')
@Controller('traces')
export class ScoresController {
  constructor(private readonly scores: TraceScoresService) {}

  /**
   * The workspace's score records, newest observed first, filtered by dataset, trace, session,
   * evaluator, metric, verdict, score, error and time (viewers; an API key's own workspace, or
   * `workspace_id` with a user's token).
   */
  @Get('scores')
  @ApiOperation({ operationId: 'listTraceScores' })
  @WorkspaceRoleRequired('viewer', { apiKeyOrQuery: 'workspace_id' })
  @ApiOkResponse({ type: PageOf(TraceScoreResponse) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: TraceScoresQuery,
  ): Promise<Page<TraceScoreResponse>> {
    return this.scores.list(access, query);
  }

  /**
   * One evaluator's metric over a window of traces' start times, by hour, day or the whole
   * window, optionally split by service, model or trace tag: counts, the pass rate with Wilson's
   * 95% interval, the mean score with Student's t 95% interval, and the SD (viewers).
   */
  @Get('scores\\:aggregate')
  @ApiOperation({ operationId: 'getTraceScoreAggregates' })
  @WorkspaceRoleRequired('viewer', { apiKeyOrQuery: 'workspace_id' })
  @ApiOkResponse({ type: TraceScoreAggregateResponse })
  aggregate(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: TraceScoresAggregateQuery,
  ): Promise<TraceScoreAggregateResponse> {
    return this.scores.aggregate(access, query);
  }
}
