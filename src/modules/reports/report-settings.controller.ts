import { Body, Controller, Delete, Get, HttpCode, Put, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import {
  PutSectionPromptRequest,
  ReportSectionPromptResponse,
  ReportSettingsResponse,
  UpdateReportSettingsRequest,
  WorkspaceQuery,
} from './dto/report-configs.dto.js';
import { ReportSettingsService } from './report-settings.service.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

const WORKSPACE_QUERY = { query: 'workspace_id' } as const;

@ApiTags('reports')
@Controller('report-settings')
export class ReportSettingsController {
  constructor(private readonly settings: ReportSettingsService) {}

  /** The workspace's report defaults: config, judge and formats (viewers). */
  @Get()
  @ApiOperation({ operationId: 'getReportSettings' })
  @WorkspaceRoleRequired('viewer', WORKSPACE_QUERY)
  @ApiOkResponse({ type: ReportSettingsResponse })
  get(@CurrentWorkspace() access: WorkspaceAccess, @Query() _query: WorkspaceQuery): Promise<ReportSettingsResponse> {
    return this.settings.get(access);
  }

  /** Changes the workspace's report defaults (admins); members left out keep their value. */
  @Put()
  @ApiOperation({ operationId: 'updateReportSettings' })
  @WorkspaceRoleRequired('admin', { body: 'workspace_id' })
  @ApiOkResponse({ type: ReportSettingsResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, report_settings_invalid' })
  update(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: UpdateReportSettingsRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ReportSettingsResponse> {
    return this.settings.update(access, body, caller);
  }

  /** Every section's prompt in effect, built-in or the workspace's own (viewers). */
  @Get('prompts')
  @ApiOperation({ operationId: 'listReportPrompts' })
  @WorkspaceRoleRequired('viewer', WORKSPACE_QUERY)
  @ApiOkResponse({ type: [ReportSectionPromptResponse] })
  listPrompts(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() _query: WorkspaceQuery,
  ): Promise<ReportSectionPromptResponse[]> {
    return this.settings.listPrompts(access);
  }

  /** One section's prompt in effect (viewers). */
  @Get('prompts/:section_key')
  @ApiOperation({ operationId: 'getReportPrompt' })
  @WorkspaceRoleRequired('viewer', WORKSPACE_QUERY)
  @ApiOkResponse({ type: ReportSectionPromptResponse })
  @ApiNotFoundResponse({ type: ProblemResponse, description: 'report_section_key_unknown' })
  getPrompt(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('section_key', PATH_TEXT.name) key: string,
    @Query() _query: WorkspaceQuery,
  ): Promise<ReportSectionPromptResponse> {
    return this.settings.getPrompt(access, key);
  }

  /** Replaces a section's prompt for the workspace (admins). */
  @Put('prompts/:section_key')
  @ApiOperation({ operationId: 'replaceReportPrompt' })
  @WorkspaceRoleRequired('admin', { body: 'workspace_id' })
  @ApiOkResponse({ type: ReportSectionPromptResponse })
  @ApiNotFoundResponse({ type: ProblemResponse, description: 'report_section_key_unknown' })
  putPrompt(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('section_key', PATH_TEXT.name) key: string,
    @Body() body: PutSectionPromptRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ReportSectionPromptResponse> {
    return this.settings.putPrompt(access, key, body, caller);
  }

  /** Falls back to the built-in prompt (admins). */
  @Delete('prompts/:section_key')
  @ApiOperation({ operationId: 'deleteReportPrompt' })
  @HttpCode(204)
  @WorkspaceRoleRequired('admin', WORKSPACE_QUERY)
  @ApiNoContentResponse({ description: 'The built-in prompt applies again' })
  @ApiNotFoundResponse({ type: ProblemResponse, description: 'report_section_key_unknown' })
  async deletePrompt(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('section_key', PATH_TEXT.name) key: string,
    @Query() _query: WorkspaceQuery,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.settings.deletePrompt(access, key, caller);
  }
}
