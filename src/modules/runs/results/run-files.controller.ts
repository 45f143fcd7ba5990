import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiForbiddenResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentWorkspace, Public, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { RunResponse, SutRunsQuery } from '../dto/run.dto.js';
import { ResultsService } from './results.service.js';
import { RunsService } from '../runs.service.js';
import { RawQuery, sendFile } from '#libs/common/file-answer.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

@ApiTags('runs')
@Controller()
export class RunFilesController {
  constructor(
    private readonly results: ResultsService,
    private readonly runs: RunsService,
  ) {}

  /** Streams a run's results as Parquet; URLs come from GET /runs/{run_id}/parquet-url (the signature authorises them). */
  @Get('files/runs/:run_id/:filename')
  @ApiOperation({ operationId: 'downloadRunParquet' })
  @Public()
  @ApiProduces('application/vnd.apache.parquet')
  @ApiOkResponse({ description: 'The Parquet file', schema: { type: 'string', format: 'binary' } })
  @ApiForbiddenResponse({ type: ProblemResponse, description: 'invalid_signature or url_expired' })
  async parquet(
    @UuidParam('run_id') runId: string,
    @TextParam('filename', PATH_TEXT.fileName) filename: string,
    @RawQuery() signed: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    await sendFile(res, await this.results.parquetFile(signed, runId, filename));
  }

  /** The runs of one SUT, newest first (viewers). */
  @Get('suts/:sut_id/runs')
  @ApiOperation({ operationId: 'listSutRuns' })
  @WorkspaceRoleRequired('viewer', { resource: 'sut', param: 'sut_id' })
  @ApiOkResponse({ type: PageOf(RunResponse) })
  sutRuns(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('sut_id') sutId: string,
    @Query() query: SutRunsQuery,
  ): Promise<Page<RunResponse>> {
    return this.runs.sutRuns(access, sutId, query);
  }
}
