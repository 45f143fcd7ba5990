import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPreconditionFailedResponse,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { PartitionResponse } from '../datasets/dto/dimensions.dto.js';
import {
  ContentUrlQuery,
  CreateReportRequest,
  ExportReportRequest,
  FormatQuery,
  ListReportsQuery,
  QuestionSchemaResponse,
  QuestionsQuery,
  RegenerateReportRequest,
  ReportContentResponse,
  ReportContentUrlResponse,
  ReportDownloadResponse,
  ReportResponse,
  ReportSectionContent,
  ReportSummary,
  UpdateReportContentRequest,
} from './dto/reports.dto.js';
import { ReportFilesService } from './report-files.service.js';
import { reportContentEtag, reportEtag, ReportsService } from './reports.service.js';
import { IfMatch, WithETag } from '#libs/common/etag.decorators.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { RequestOrigin } from '#libs/common/file-answer.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

const REPORT = { resource: 'report', param: 'report_id' } as const;
const RUN = { resource: 'run', param: 'run_id' } as const;

/**
 * Reports from runs. `/reports/{run_id}` (POST) and `/reports/{run_id}/partitions…` name a run,
 * every other `/reports/{report_id}…` a report; the literal `questions/` route is declared first.
 */
@ApiTags('reports')
@Controller('reports')
export class ReportsController {
  constructor(
    private readonly reports: ReportsService,
    private readonly files: ReportFilesService,
  ) {}

  /** The workspace's reports, newest first, optionally of one run (viewers). */
  @Get()
  @ApiOperation({ operationId: 'listReports' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: PageOf(ReportSummary) })
  list(@CurrentWorkspace() access: WorkspaceAccess, @Query() query: ListReportsQuery): Promise<Page<ReportSummary>> {
    return this.reports.list(access, query);
  }

  /** The questions a report on this run answers, section by section, from its metrics and dimensions (viewers). */
  @Get('questions/:run_id')
  @ApiOperation({ operationId: 'listReportQuestions' })
  @WorkspaceRoleRequired('viewer', RUN)
  @ApiOkResponse({ type: QuestionSchemaResponse })
  questions(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') runId: string,
    @Query() query: QuestionsQuery,
  ): Promise<QuestionSchemaResponse> {
    return this.reports.questions(access, runId, query.config_id);
  }

  /** Builds a report from the run (members): every section's figures from its results, narratives from the judge when one is configured, else from the template. */
  @Post(':run_id')
  @ApiOperation({ operationId: 'createReport' })
  @WorkspaceRoleRequired('member', RUN)
  @ApiCreatedResponse({ type: ReportResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, report_reference_invalid' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') runId: string,
    @Body() body: CreateReportRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ReportResponse> {
    return this.reports.create(access, runId, body ?? {}, caller);
  }

  /** One report with its sections (viewers); the ETag serves If-Match on PUT content. */
  @Get(':report_id')
  @ApiOperation({ operationId: 'getReport' })
  @WorkspaceRoleRequired('viewer', REPORT)
  @ApiOkResponse({ type: ReportResponse })
  @WithETag(reportEtag)
  get(@CurrentWorkspace() access: WorkspaceAccess, @UuidParam('report_id') id: string): Promise<ReportResponse> {
    return this.reports.get(access, id);
  }

  /** Every section and the whole report as one Markdown document (viewers); the ETag serves If-Match on PUT content. */
  @Get(':report_id/content')
  @ApiOperation({ operationId: 'getReportContent' })
  @WorkspaceRoleRequired('viewer', REPORT)
  @ApiOkResponse({ type: ReportContentResponse })
  @WithETag(reportContentEtag)
  content(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('report_id') id: string,
  ): Promise<ReportContentResponse> {
    return this.reports.content(access, id);
  }

  /** Edits sections' markdown and titles (members); edited sections are marked `edited`. Honours If-Match. */
  @Put(':report_id/content')
  @ApiOperation({ operationId: 'updateReportContent' })
  @WorkspaceRoleRequired('member', REPORT)
  @ApiOkResponse({ type: ReportContentResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, report_content_invalid' })
  @ApiPreconditionFailedResponse({ type: ProblemResponse, description: 'If-Match does not match the current ETag' })
  @WithETag(reportContentEtag)
  updateContent(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('report_id') id: string,
    @Body() body: UpdateReportContentRequest,
    @IfMatch() ifMatch: IfMatchPrecondition,
    @CurrentUser() caller: Principal,
  ): Promise<ReportContentResponse> {
    return this.reports.updateContent(access, id, body, ifMatch, caller);
  }

  /** A signed, expiring URL to the report's current content as Markdown or HTML (viewers). */
  @Get(':report_id/content-url')
  @ApiOperation({ operationId: 'getReportContentUrl' })
  @WorkspaceRoleRequired('viewer', REPORT)
  @ApiOkResponse({ type: ReportContentUrlResponse })
  async contentUrl(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('report_id') id: string,
    @Query() query: ContentUrlQuery,
    @RequestOrigin() origin: string,
  ): Promise<ReportContentUrlResponse> {
    return this.files.contentUrl(origin, await this.reports.require(access, id), query.format ?? 'markdown');
  }

  /** One section by its key (viewers). */
  @Get(':report_id/content/:key')
  @ApiOperation({ operationId: 'getReportSection' })
  @WorkspaceRoleRequired('viewer', REPORT)
  @ApiOkResponse({ type: ReportSectionContent })
  @ApiNotFoundResponse({ type: ProblemResponse, description: 'report_section_not_found' })
  section(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('report_id') id: string,
    @TextParam('key', PATH_TEXT.name) key: string,
  ): Promise<ReportSectionContent> {
    return this.reports.section(access, id, key);
  }

  /** Removes a section from the report (members); regenerate with `sections` naming it brings it back. */
  @Delete(':report_id/content/:section_key')
  @ApiOperation({ operationId: 'deleteReportSection' })
  @WorkspaceRoleRequired('member', REPORT)
  @ApiOkResponse({ type: ReportContentResponse })
  @ApiNotFoundResponse({ type: ProblemResponse, description: 'report_section_not_found' })
  deleteSection(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('report_id') id: string,
    @TextParam('section_key', PATH_TEXT.name) key: string,
    @CurrentUser() caller: Principal,
  ): Promise<ReportContentResponse> {
    return this.reports.deleteSection(access, id, key, caller);
  }

  /** A signed, expiring URL to the report's file in a format (viewers): the export of this version of the report, rendered and stored when there is none yet. */
  @Get(':report_id/download')
  @ApiOperation({ operationId: 'getReportDownloadUrl' })
  @WorkspaceRoleRequired('viewer', REPORT)
  @ApiOkResponse({ type: ReportDownloadResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'report_format_not_enabled' })
  async download(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('report_id') id: string,
    @Query() query: FormatQuery,
    @RequestOrigin() origin: string,
    @CurrentUser() caller: Principal,
  ): Promise<ReportDownloadResponse> {
    return this.files.download(origin, access, await this.reports.require(access, id), query.format, caller);
  }

  /** Renders the report as Markdown, HTML or PDF and stores the file (members); answers a signed URL to it. */
  @Post(':report_id/export')
  @ApiOperation({ operationId: 'exportReport' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', REPORT)
  @ApiOkResponse({ type: ReportDownloadResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, report_format_not_enabled' })
  async export(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('report_id') id: string,
    @Body() body: ExportReportRequest,
    @RequestOrigin() origin: string,
    @CurrentUser() caller: Principal,
  ): Promise<ReportDownloadResponse> {
    return this.files.export(origin, access, await this.reports.require(access, id), body?.format, caller);
  }

  /** Rebuilds the report from its run (members), keeping edited sections unless `keep_edits` is false. */
  @Post(':report_id/regenerate')
  @ApiOperation({ operationId: 'regenerateReport' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', REPORT)
  @ApiOkResponse({ type: ReportResponse })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, report_reference_invalid' })
  regenerate(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('report_id') id: string,
    @Body() body: RegenerateReportRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ReportResponse> {
    return this.reports.regenerate(access, id, body ?? {}, caller);
  }

  /** The partitions of the dataset version the run executed (viewers). */
  @Get(':run_id/partitions')
  @ApiOperation({ operationId: 'listReportPartitions' })
  @WorkspaceRoleRequired('viewer', RUN)
  @ApiOkResponse({ type: [PartitionResponse] })
  partitions(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') runId: string,
  ): Promise<PartitionResponse[]> {
    return this.reports.partitionsOf(access, runId);
  }

  /** Partition id -> the metric names a report can show for it: the run's metrics, then the built-ins the version's mapping supports (viewers). */
  @Get(':run_id/partitions/metrics')
  @ApiOperation({ operationId: 'listReportPartitionMetrics' })
  @WorkspaceRoleRequired('viewer', RUN)
  @ApiOkResponse({ schema: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } })
  partitionMetrics(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('run_id') runId: string,
  ): Promise<Record<string, string[]>> {
    return this.reports.partitionMetrics(access, runId);
  }
}
