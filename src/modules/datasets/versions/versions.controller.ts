import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { DownloadService } from './download.service.js';
import { DatasetVersionResponse, GetDatasetVersionResponse, MapVersionRequest } from '../dto/dataset.dto.js';
import { PresignedUrlResponse, VersionDownloadQuery } from '../dto/download.dto.js';
import { QueryResponse, RowQueryRequest } from '../dto/query.dto.js';
import { QueryService } from '../rows/query.service.js';
import { VersionsService } from './versions.service.js';
import { RequestOrigin } from '#libs/common/file-answer.js';

const DATASET = { resource: 'dataset', param: 'dataset_id' };

/** One version of a dataset: its lifecycle, mapping, rows and download. */
@ApiTags('dataset versions')
@Controller('datasets/:dataset_id/versions/:version_id')
export class VersionsController {
  constructor(
    private readonly versions: VersionsService,
    private readonly query: QueryService,
    private readonly downloads: DownloadService,
  ) {}

  /** Makes the version the dataset's current one (members); the previous current goes back to `candidate`. */
  @Post('promote')
  @ApiOperation({ operationId: 'promoteDatasetVersion' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', DATASET)
  @ApiOkResponse({ type: DatasetVersionResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'version_state_conflict: already current' })
  promote(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
    @CurrentUser() caller: Principal,
  ): Promise<DatasetVersionResponse> {
    return this.versions.promote(access, id, versionId, caller);
  }

  /** Retires the version (members); a retired version stays readable and can be promoted again. */
  @Post('demote')
  @ApiOperation({ operationId: 'demoteDatasetVersion' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', DATASET)
  @ApiOkResponse({ type: DatasetVersionResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'version_state_conflict: already retired' })
  demote(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
    @CurrentUser() caller: Principal,
  ): Promise<DatasetVersionResponse> {
    return this.versions.demote(access, id, versionId, caller);
  }

  /** Maps canonical fields (input, expected_output, context, session_id, metadata) onto the version's columns (members). */
  @Post('map')
  @ApiOperation({ operationId: 'mapDatasetVersionFields' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', DATASET)
  @ApiOkResponse({ type: DatasetVersionResponse })
  map(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
    @Body() body: MapVersionRequest,
    @CurrentUser() caller: Principal,
  ): Promise<DatasetVersionResponse> {
    return this.versions.map(access, id, versionId, body, caller);
  }

  /** Filters, sorts, projects and pages the version's rows (viewers); see docs/query-language.md. */
  @Post('query')
  @ApiOperation({ operationId: 'queryDatasetVersion' })
  @HttpCode(200)
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: QueryResponse })
  async runQuery(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
    @Body() body: RowQueryRequest,
  ): Promise<QueryResponse> {
    const { version } = await this.versions.require(access, id, versionId);
    return this.query.query(version, body);
  }

  /** A signed, expiring URL that downloads the version as CSV, JSON Lines or Parquet without a token (viewers). */
  @Get('download')
  @ApiOperation({ operationId: 'getDatasetVersionDownloadUrl' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: PresignedUrlResponse })
  async download(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
    @Query() query: VersionDownloadQuery,
    @RequestOrigin() origin: string,
  ): Promise<PresignedUrlResponse> {
    const { dataset, version } = await this.versions.require(access, id, versionId);
    return this.downloads.presign(origin, dataset.name, version, query.format, query.expires_in);
  }
}

/** A version by its id alone, for clients that hold only the id (a run names the version it ran on). */
@ApiTags('dataset versions')
@Controller('dataset-versions')
export class DatasetVersionsController {
  constructor(private readonly versions: VersionsService) {}

  /** The version with its dataset and schema (viewers of its workspace; 404 for anyone else). */
  @Get(':version_id')
  @ApiOperation({ operationId: 'getDatasetVersion' })
  @WorkspaceRoleRequired('viewer', { resource: 'dataset_version', param: 'version_id', conceal: true })
  @ApiOkResponse({ type: GetDatasetVersionResponse })
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('version_id') versionId: string,
  ): Promise<GetDatasetVersionResponse> {
    return this.versions.getById(access, versionId);
  }
}
