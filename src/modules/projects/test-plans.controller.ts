import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import {
  CreateTestPlanRequest,
  CreateTestPlanVersionRequest,
  ListTestPlansQuery,
  ListTestPlanVersionsQuery,
  TestPlanDetailResponse,
  TestPlanResponse,
  TestPlanSummaryResponse,
  TestPlanVersionPage,
  TestPlanWorkspaceQuery,
} from './dto/test-plan.dto.js';
import { TestPlansService } from './test-plans.service.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

const IN_WORKSPACE = { query: 'workspace_id' } as const;
const REF = { name: 'ref', description: 'The test plan id, or its name (unique in the workspace, case-insensitive)' };

@ApiTags('test plans')
@Controller('test-plans')
export class TestPlansController {
  constructor(private readonly plans: TestPlansService) {}

  /** The workspace's test plans with their latest version's size (viewers). */
  @Get()
  @ApiOperation({ operationId: 'listTestPlans' })
  @WorkspaceRoleRequired('viewer', IN_WORKSPACE)
  @ApiOkResponse({ type: PageOf(TestPlanSummaryResponse) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ListTestPlansQuery,
  ): Promise<Page<TestPlanSummaryResponse>> {
    return this.plans.list(access, query);
  }

  /** Version 1 of a new plan (members): datasets or partitions of the workspace, metrics with thresholds, the release rule. */
  @Post()
  @ApiOperation({ operationId: 'createTestPlan' })
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: TestPlanResponse })
  @ApiBadRequestResponse({
    type: ProblemResponse,
    description: 'validation_failed, test_plan_invalid, unknown_dataset',
  })
  @ApiConflictResponse({ type: ProblemResponse, description: 'test_plan_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateTestPlanRequest,
    @CurrentUser() caller: Principal,
  ): Promise<TestPlanResponse> {
    return this.plans.create(access, body, caller);
  }

  /** The plan's latest version with the projects carrying it (viewers). */
  @Get(':ref')
  @ApiOperation({ operationId: 'getTestPlan' })
  @WorkspaceRoleRequired('viewer', IN_WORKSPACE)
  @ApiParam(REF)
  @ApiOkResponse({ type: TestPlanDetailResponse })
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('ref', PATH_TEXT.name) ref: string,
    @Query() _query: TestPlanWorkspaceQuery,
  ): Promise<TestPlanDetailResponse> {
    return this.plans.get(access, ref);
  }

  /** The plan's versions, newest first (viewers). */
  @Get(':ref/versions')
  @ApiOperation({ operationId: 'listTestPlanVersions' })
  @WorkspaceRoleRequired('viewer', IN_WORKSPACE)
  @ApiParam(REF)
  @ApiOkResponse({ type: TestPlanVersionPage })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed (page, page_size, workspace_id)' })
  versions(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('ref', PATH_TEXT.name) ref: string,
    @Query() query: ListTestPlanVersionsQuery,
  ): Promise<TestPlanVersionPage> {
    return this.plans.versions(access, ref, query);
  }

  /** A new version (members), from `from_version` (default the latest): what the body leaves out is copied. Versions never change. */
  @Post(':ref/versions')
  @ApiOperation({ operationId: 'createTestPlanVersion' })
  @WorkspaceRoleRequired('member', IN_WORKSPACE)
  @ApiParam(REF)
  @ApiCreatedResponse({ type: TestPlanResponse })
  @ApiBadRequestResponse({
    type: ProblemResponse,
    description: 'validation_failed, test_plan_invalid, unknown_dataset',
  })
  createVersion(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('ref', PATH_TEXT.name) ref: string,
    @Query() _query: TestPlanWorkspaceQuery,
    @Body() body: CreateTestPlanVersionRequest,
    @CurrentUser() caller: Principal,
  ): Promise<TestPlanResponse> {
    return this.plans.createVersion(access, ref, body, caller);
  }

  /** One version (a number, or `latest`) (viewers). */
  @Get(':ref/versions/:version')
  @ApiOperation({ operationId: 'getTestPlanVersion' })
  @WorkspaceRoleRequired('viewer', IN_WORKSPACE)
  @ApiParam(REF)
  @ApiParam({ name: 'version', description: 'A version number, or `latest`', example: '1' })
  @ApiOkResponse({ type: TestPlanDetailResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'invalid_test_plan_version' })
  getVersion(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('ref', PATH_TEXT.name) ref: string,
    @TextParam('version', PATH_TEXT.version) version: string,
    @Query() _query: TestPlanWorkspaceQuery,
  ): Promise<TestPlanDetailResponse> {
    return this.plans.get(access, ref, version);
  }
}
