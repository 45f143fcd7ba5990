import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { DatasetsService } from '../datasets.service.js';
import {
  AvailableChecksQuery,
  CheckSuggestionsQuery,
  DataOperationRunResponse,
  DatasetQualityVerdictResponse,
  DatasetSelectableChecksResponse,
  ListOperationRunsQuery,
  QualityCheckParamDto,
  RunQualityChecksRequest,
  SuggestionResponse,
} from '../dto/quality.dto.js';
import { QualityService } from './quality.service.js';
import { VersionsService } from '../versions/versions.service.js';

const DATASET = { resource: 'dataset', param: 'dataset_id' };

/** Quality checks of datasets and their versions, and the kept runs of them. */
@ApiTags('dataset quality')
@ApiExtraModels(QualityCheckParamDto)
@Controller()
export class QualityController {
  constructor(
    private readonly datasets: DatasetsService,
    private readonly versions: VersionsService,
    private readonly quality: QualityService,
  ) {}

  /** The quality checks, each with whether it applies to the version's columns and why (viewers). */
  @Get('datasets/:dataset_id/available-checks')
  @ApiOperation({ operationId: 'listAvailableQualityChecks' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: DatasetSelectableChecksResponse })
  async available(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @Query() query: AvailableChecksQuery,
  ): Promise<DatasetSelectableChecksResponse> {
    const dataset = await this.datasets.require(access, id);
    return this.quality.available(await this.datasets.resolveVersion(dataset, query.version_id));
  }

  /** The newest verdict of every version that has been checked, newest version first (viewers). */
  @Get('datasets/:dataset_id/versions/quality-checks')
  @ApiOperation({ operationId: 'listLatestQualityVerdicts' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: [DatasetQualityVerdictResponse] })
  async perVersion(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
  ): Promise<DatasetQualityVerdictResponse[]> {
    await this.datasets.require(access, id);
    return this.quality.latestPerVersion(id);
  }

  /** The newest verdict on the version (viewers); 404 no_quality_run before the first run. */
  @Get('datasets/:dataset_id/versions/:version_id/quality-checks')
  @ApiOperation({ operationId: 'getLatestQualityVerdict' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: DatasetQualityVerdictResponse })
  async latest(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
  ): Promise<DatasetQualityVerdictResponse> {
    const { version } = await this.versions.require(access, id, versionId);
    return this.quality.latest(version);
  }

  /** Runs quality checks on the version now and keeps the run (members). */
  @Post('datasets/:dataset_id/versions/:version_id/quality-checks\\:run')
  @ApiOperation({ operationId: 'runQualityChecks' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', DATASET)
  @ApiOkResponse({ type: DatasetQualityVerdictResponse })
  async run(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
    @Body() body: RunQualityChecksRequest,
    @CurrentUser() caller: Principal,
  ): Promise<DatasetQualityVerdictResponse> {
    const { version } = await this.versions.require(access, id, versionId);
    return this.quality.run(access, version, body, caller);
  }

  /** Data-operation runs on the version, newest first (viewers). */
  @Get('datasets/:dataset_id/versions/:version_id/quality-checks/runs')
  @ApiOperation({ operationId: 'listQualityCheckRuns' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: PageOf(DataOperationRunResponse) })
  async runs(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
    @Query() query: ListOperationRunsQuery,
  ): Promise<Page<DataOperationRunResponse>> {
    const { version } = await this.versions.require(access, id, versionId);
    return this.quality.runs(version, query);
  }

  /** One data-operation run (viewers). */
  @Get('datasets/:dataset_id/versions/:version_id/quality-checks/runs/:run_id')
  @ApiOperation({ operationId: 'getQualityCheckRun' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: DataOperationRunResponse })
  async getRun(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
    @UuidParam('run_id') runId: string,
  ): Promise<DataOperationRunResponse> {
    const { version } = await this.versions.require(access, id, versionId);
    return this.quality.getRun(version, runId);
  }

  /** Checks suited to a dataset's schema, with the reason for each (viewers of its workspace). */
  @Get('check-suggestions')
  @ApiOperation({ operationId: 'listQualityCheckSuggestions' })
  @WorkspaceRoleRequired('viewer', { resource: 'dataset', query: 'dataset_id' })
  @ApiOkResponse({ type: SuggestionResponse })
  async suggestions(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: CheckSuggestionsQuery,
  ): Promise<SuggestionResponse> {
    const dataset = await this.datasets.require(access, query.dataset_id);
    return this.quality.suggestions(await this.datasets.resolveVersion(dataset, query.version_id));
  }
}
