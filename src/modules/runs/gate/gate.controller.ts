import { Body, Controller, Get, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { GateQuery, GateResponse, type GateFormat } from '../dto/gate.dto.js';
import { GateVerdictResponse, RecordedGateResponse, RecordGateRequest } from '../dto/gate-verdict.dto.js';
import { GateService } from './gate.service.js';

/** The media types the gate negotiates, in order of preference when the client accepts several. */
const RUN = { resource: 'run', param: 'run_id' } as const;

const ACCEPTED: Record<string, GateFormat> = {
  'application/json': 'json',
  'text/markdown': 'markdown',
  'application/xml': 'junit',
  'text/xml': 'junit',
};

@ApiTags('runs')
@ApiExtraModels(GateResponse)
@Controller('runs')
export class GateController {
  constructor(private readonly gates: GateService) {}

  /**
   * The release gate (viewers): judges a run by its project's test plan (thresholds overall and
   * per dimension value, the release rule; without a plan, the run's own pass rule) and, with
   * `baseline_run_id`, fails on a significant regression against that run. Answers 200 with
   * `verdict` pass or fail and every check (a run that has not succeeded fails); `format` or the
   * Accept header picks JSON, Markdown (a pull-request comment) or JUnit XML. Nothing is
   * recorded (POST records): the same runs and plan give the same answer.
   */
  @Get(':run_id/gate')
  @ApiOperation({ operationId: 'getRunGate' })
  @WorkspaceRoleRequired('viewer', RUN)
  @ApiProduces('application/json', 'text/markdown', 'application/xml')
  @ApiOkResponse({
    description: 'The verdict with every check',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(GateResponse) } },
      'text/markdown': {
        schema: { type: 'string' },
        example: '## ❌ Release gate failed: nightly\n\n| | Check | Metric | Dimension | …\n',
      },
      'application/xml': {
        schema: { type: 'string' },
        example:
          '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="ews release gate" tests="9" failures="1" errors="0" skipped="0">…</testsuites>\n',
      },
    },
  })
  @ApiConflictResponse({ type: ProblemResponse, description: 'gate_baseline_not_finished' })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, project_ambiguous' })
  async gate(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') runId: string,
    @Query() query: GateQuery,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const format = query.format ?? ACCEPTED[req.accepts(Object.keys(ACCEPTED)) || 'application/json'];
    const answer = await this.gates.render(access, runId, query, format);
    res.status(200).setHeader('Content-Type', answer.contentType);
    res.setHeader('Vary', 'Accept');
    res.send(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
  }

  /**
   * Judges an ended run as GET does and records the verdict (members). An optional `label` names
   * the line of runs (a branch such as `main`): `GET /runs?gate_verdict=pass&gate_label=main`
   * then finds the last good run. 201 with the answer and the record; the same inputs with the
   * same outcome again answer that record with 200. A run not yet ended is 409.
   */
  @Post(':run_id/gate')
  @ApiOperation({ operationId: 'createRunGateVerdict' })
  @WorkspaceRoleRequired('member', RUN)
  @ApiCreatedResponse({ type: RecordedGateResponse, description: 'The verdict, judged and recorded' })
  @ApiOkResponse({ type: RecordedGateResponse, description: 'The same verdict was recorded before: that record' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'gate_run_not_finished, gate_baseline_not_finished' })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, project_ambiguous' })
  async record(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') runId: string,
    @Body() body: RecordGateRequest,
    @CurrentUser() caller: Principal,
    @Res({ passthrough: true }) res: Response,
  ): Promise<RecordedGateResponse> {
    const { created, response } = await this.gates.record(access, runId, body, caller);
    res.status(created ? 201 : 200);
    return response;
  }

  /** The run's recorded gate verdicts, newest first (viewers). */
  @Get(':run_id/gate-verdicts')
  @ApiOperation({ operationId: 'listRunGateVerdicts' })
  @WorkspaceRoleRequired('viewer', RUN)
  @ApiOkResponse({ type: [GateVerdictResponse] })
  verdicts(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') runId: string,
  ): Promise<GateVerdictResponse[]> {
    return this.gates.list(access, runId);
  }
}
