import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import {
  CreateJudgeRequest,
  JudgeConnectionResponse,
  JudgeTestRequest,
  JudgeTestResult,
  ListJudgesQuery,
  UpdateJudgeRequest,
} from '../dto/judge.dto.js';
import { JudgesService } from './judges.service.js';

const JUDGE = { resource: 'judge', param: 'judge_id' } as const;

@ApiTags('judges')
@Controller('judges')
export class JudgesController {
  constructor(private readonly judges: JudgesService) {}

  /** The workspace's judges (viewers). */
  @Get()
  @ApiOperation({ operationId: 'listJudges' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: PageOf(JudgeConnectionResponse) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ListJudgesQuery,
  ): Promise<Page<JudgeConnectionResponse>> {
    return this.judges.list(access, query);
  }

  /** Adds a judge (members; naming its key's secret is for admins). */
  @Post()
  @ApiOperation({ operationId: 'createJudge' })
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: JudgeConnectionResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'judge_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateJudgeRequest,
    @CurrentUser() caller: Principal,
  ): Promise<JudgeConnectionResponse> {
    return this.judges.create(access, body, caller);
  }

  /** One judge (viewers); its key's value never appears. */
  @Get(':judge_id')
  @ApiOperation({ operationId: 'getJudge' })
  @WorkspaceRoleRequired('viewer', JUDGE)
  @ApiOkResponse({ type: JudgeConnectionResponse })
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('judge_id') id: string,
  ): Promise<JudgeConnectionResponse> {
    return this.judges.get(access, id);
  }

  /** Changes a judge (members; setting a secret or moving a judge that sends one is for admins). */
  @Patch(':judge_id')
  @ApiOperation({ operationId: 'updateJudge' })
  @WorkspaceRoleRequired('member', JUDGE)
  @ApiOkResponse({ type: JudgeConnectionResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'judge_name_taken' })
  update(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('judge_id') id: string,
    @Body() body: UpdateJudgeRequest,
    @CurrentUser() caller: Principal,
  ): Promise<JudgeConnectionResponse> {
    return this.judges.update(access, id, body, caller);
  }

  /** Deletes a judge no metric or eval config names (admins). */
  @Delete(':judge_id')
  @ApiOperation({ operationId: 'deleteJudge' })
  @HttpCode(204)
  @WorkspaceRoleRequired('admin', JUDGE)
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'judge_in_use' })
  async delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('judge_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.judges.delete(access, id, caller);
  }

  /** Sends a probe (or the given rubric and sample) and reports latency and the parsed verdict (members). An unparseable answer is an error, never a score. */
  @Post(':judge_id/test')
  @ApiOperation({ operationId: 'testJudge' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', JUDGE)
  @ApiOkResponse({ type: JudgeTestResult })
  test(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('judge_id') id: string,
    @Body() body: JudgeTestRequest,
  ): Promise<JudgeTestResult> {
    return this.judges.test(access, id, body);
  }
}
