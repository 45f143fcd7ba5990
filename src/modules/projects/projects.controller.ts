import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Put, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { CoverageQuery, ProjectCoverageResponse } from './dto/insights.dto.js';
import {
  AttachTestPlanRequest,
  CreateProjectRequest,
  ListProjectsQuery,
  MoveProjectRequest,
  ProjectCreateResponse,
  ProjectListItem,
  ProjectPatchResponse,
  ProjectResponse,
  UpdateProjectRequest,
} from './dto/project.dto.js';
import { ProjectsService } from './projects.service.js';

const PROJECT = { resource: 'project', param: 'project_id' } as const;

@ApiTags('projects')
@Controller('projects')
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  /** The workspace's projects (viewers); filter with `q`, sort by name, created_at or updated_at. */
  @Get()
  @ApiOperation({ operationId: 'listProjects' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: PageOf(ProjectListItem) })
  list(@CurrentWorkspace() access: WorkspaceAccess, @Query() query: ListProjectsQuery): Promise<Page<ProjectListItem>> {
    return this.projects.list(access, query);
  }

  /** Creates a project (members) from a template's dimension list (as it is or edited), with SUTs and datasets of the workspace. */
  @Post()
  @ApiOperation({ operationId: 'createProject' })
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: ProjectCreateResponse })
  @ApiBadRequestResponse({
    type: ProblemResponse,
    description: 'validation_failed, unknown_template, project_dimensions_invalid, unknown_sut, unknown_dataset',
  })
  @ApiConflictResponse({ type: ProblemResponse, description: 'project_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateProjectRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ProjectCreateResponse> {
    return this.projects.create(access, body, caller);
  }

  /** One project (viewers). */
  @Get(':project_id')
  @ApiOperation({ operationId: 'getProject' })
  @WorkspaceRoleRequired('viewer', PROJECT)
  @ApiOkResponse({ type: ProjectResponse })
  get(@CurrentWorkspace() access: WorkspaceAccess, @UuidParam('project_id') id: string): Promise<ProjectResponse> {
    return this.projects.get(access, id);
  }

  /** Changes name, description, dimensions or links (members); lists replace the old ones. */
  @Patch(':project_id')
  @ApiOperation({ operationId: 'updateProject' })
  @WorkspaceRoleRequired('member', PROJECT)
  @ApiOkResponse({ type: ProjectPatchResponse })
  @ApiBadRequestResponse({
    type: ProblemResponse,
    description: 'validation_failed, project_dimensions_invalid, unknown_sut, unknown_dataset',
  })
  @ApiConflictResponse({ type: ProblemResponse, description: 'project_name_taken' })
  update(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('project_id') id: string,
    @Body() body: UpdateProjectRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ProjectPatchResponse> {
    return this.projects.update(access, id, body, caller);
  }

  /** Rows of the project's datasets per dimension value (and chosen pairs), and the values with fewer than `min_rows` (viewers). */
  @Get(':project_id/coverage')
  @ApiOperation({ operationId: 'getProjectCoverage' })
  @WorkspaceRoleRequired('viewer', PROJECT)
  @ApiOkResponse({ type: ProjectCoverageResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, project_dimension_unknown' })
  coverage(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('project_id') id: string,
    @Query() query: CoverageQuery,
  ): Promise<ProjectCoverageResponse> {
    return this.projects.coverage(access, id, query);
  }

  /** Moves the project to another workspace (admins of both); its links to the old workspace's SUTs, datasets and test plan are dropped. */
  @Post(':project_id/move')
  @ApiOperation({ operationId: 'moveProject' })
  @HttpCode(200)
  @WorkspaceRoleRequired('admin', PROJECT)
  @ApiOkResponse({ type: ProjectResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, project_move_invalid' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'project_name_taken' })
  move(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('project_id') id: string,
    @Body() body: MoveProjectRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ProjectResponse> {
    return this.projects.move(access, id, body, caller);
  }

  /** Attaches a test plan version (default its latest) to a project that has none (members). */
  @Post(':project_id/test-plan')
  @ApiOperation({ operationId: 'attachProjectTestPlan' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', PROJECT)
  @ApiOkResponse({ type: ProjectPatchResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, unknown_test_plan' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'project_test_plan_attached' })
  attachPlan(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('project_id') id: string,
    @Body() body: AttachTestPlanRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ProjectPatchResponse> {
    return this.projects.attachPlan(access, id, body, false, caller);
  }

  /** Sets the project's test plan version, replacing any attached one (members). */
  @Put(':project_id/test-plan')
  @ApiOperation({ operationId: 'replaceProjectTestPlan' })
  @WorkspaceRoleRequired('member', PROJECT)
  @ApiOkResponse({ type: ProjectPatchResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, unknown_test_plan' })
  replacePlan(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('project_id') id: string,
    @Body() body: AttachTestPlanRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ProjectPatchResponse> {
    return this.projects.attachPlan(access, id, body, true, caller);
  }

  /** Detaches the test plan (members); a project without one is answered unchanged. */
  @Delete(':project_id/test-plan')
  @ApiOperation({ operationId: 'detachProjectTestPlan' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', PROJECT)
  @ApiOkResponse({ type: ProjectResponse })
  detachPlan(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('project_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<ProjectResponse> {
    return this.projects.detachPlan(access, id, caller);
  }
}
