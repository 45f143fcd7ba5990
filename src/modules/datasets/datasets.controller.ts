import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Patch,
  Post,
  Query,
  Res,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConflictResponse,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiPreconditionFailedResponse,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { FileUploadInterceptor } from '#libs/common/upload.interceptor.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { DatasetsService, type UploadedFile as StoredUpload } from './datasets.service.js';
import { DownloadService } from './versions/download.service.js';
import {
  AuditEntryResponse,
  AuditQuery,
  DatasetResponse,
  DatasetVersionResponse,
  ListDatasetsQuery,
  ListVersionsQuery,
  SchemaQuery,
  SchemaResponse,
  SnapshotResponse,
  UpdateDatasetRequest,
  UploadDatasetForm,
  UploadDatasetQuery,
  UploadDatasetRequest,
} from './dto/dataset.dto.js';
import { DatasetDownloadQuery, PresignedUrlResponse } from './dto/download.dto.js';
import { DatasetQueryRequest, QueryResponse } from './dto/query.dto.js';
import { QueryService } from './rows/query.service.js';
import { VersionsService } from './versions/versions.service.js';
import type { Response } from 'express';
import { IfMatch, WithETag } from '#libs/common/etag.decorators.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { datasetEtag } from './datasets.mapper.js';
import { RequestOrigin } from '#libs/common/file-answer.js';
import { RateLimitClass } from '#libs/auth/rate-limits.js';

const DATASET = { resource: 'dataset', param: 'dataset_id' };

@ApiTags('datasets')
@Controller('datasets')
export class DatasetsController {
  constructor(
    private readonly datasets: DatasetsService,
    private readonly versions: VersionsService,
    private readonly query: QueryService,
    private readonly downloads: DownloadService,
  ) {}

  /** Datasets of a workspace (viewers), or of every workspace you belong to when `workspace_id` is left out. */
  @Get()
  @ApiOperation({ operationId: 'listDatasets' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id', optional: true })
  @ApiOkResponse({ type: PageOf(DatasetResponse) })
  list(@Query() query: ListDatasetsQuery, @CurrentUser() caller: Principal): Promise<Page<DatasetResponse>> {
    return this.datasets.list(query, caller);
  }

  /**
   * Uploads a CSV, JSON, JSON Lines or Parquet file (multipart, part `file`) as a new dataset
   * with version 1, or as the next version of `dataset_id` (members). The file is streamed: its
   * size is bounded by UPLOAD_MAX_BYTES (413) and its rows by UPLOAD_MAX_ROWS (413). A
   * malformed file is 400 `malformed_file` naming the line or row, and creates nothing.
   */
  @Post('upload')
  @ApiOperation({ operationId: 'uploadDataset' })
  @RateLimitClass('ingestion')
  @WorkspaceRoleRequired('member', { query: 'workspace_id' })
  @UseInterceptors(FileUploadInterceptor)
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: UploadDatasetForm })
  @ApiCreatedResponse({ type: DatasetResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'dataset_name_taken' })
  @ApiPayloadTooLargeResponse({
    type: ProblemResponse,
    description: 'payload_too_large (UPLOAD_MAX_BYTES) or too_many_rows (UPLOAD_MAX_ROWS)',
  })
  @WithETag(datasetEtag)
  async upload(
    @Query() _query: UploadDatasetQuery,
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: UploadDatasetRequest,
    @UploadedFile() file: StoredUpload | undefined,
    @CurrentUser() caller: Principal,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DatasetResponse> {
    const dataset = await this.datasets.upload(access, body, file, caller);
    res.setHeader('Location', `/datasets/${dataset.id}`);
    return dataset;
  }

  /** A dataset with its newest version (viewers); carries an ETag for If-Match on PATCH. */
  @Get(':dataset_id')
  @ApiOperation({ operationId: 'getDataset' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: DatasetResponse })
  @WithETag(datasetEtag)
  get(@CurrentWorkspace() access: WorkspaceAccess, @UuidParam('dataset_id') id: string): Promise<DatasetResponse> {
    return this.datasets.get(access, id);
  }

  /** Renames, re-describes or re-tags the dataset (members). Honours If-Match. */
  @Patch(':dataset_id')
  @ApiOperation({ operationId: 'updateDataset' })
  @WorkspaceRoleRequired('member', DATASET)
  @ApiOkResponse({ type: DatasetResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'dataset_name_taken' })
  @ApiPreconditionFailedResponse({ type: ProblemResponse, description: 'If-Match does not match the current ETag' })
  @WithETag(datasetEtag)
  update(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @Body() body: UpdateDatasetRequest,
    @IfMatch() ifMatch: IfMatchPrecondition,
    @CurrentUser() caller: Principal,
  ): Promise<DatasetResponse> {
    return this.datasets.update(access, id, body, ifMatch, caller);
  }

  /** Deletes the dataset with every version, row, dimension and partition (admins). */
  @Delete(':dataset_id')
  @ApiOperation({ operationId: 'deleteDataset' })
  @HttpCode(204)
  @WorkspaceRoleRequired('admin', DATASET)
  @ApiNoContentResponse({ description: 'Deleted' })
  async delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.datasets.delete(access, id, caller);
  }

  /** Who changed what and when, newest first (viewers): uploads, edits staged and committed, promotions, mappings. */
  @Get(':dataset_id/audit')
  @ApiOperation({ operationId: 'listDatasetAuditEntries' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: [AuditEntryResponse] })
  audit(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @Query() query: AuditQuery,
  ): Promise<AuditEntryResponse[]> {
    return this.datasets.auditTrail(access, id, query);
  }

  /** Inferred column types and statistics of a version (viewers). */
  @Get(':dataset_id/schema')
  @ApiOperation({ operationId: 'getDatasetSchema' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: SchemaResponse })
  schema(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @Query() query: SchemaQuery,
  ): Promise<SchemaResponse> {
    return this.datasets.schema(access, id, query.version_id);
  }

  /** The materialised content of every version: row count, content hash and download formats (viewers). */
  @Get(':dataset_id/snapshots')
  @ApiOperation({ operationId: 'listDatasetSnapshots' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: [SnapshotResponse] })
  snapshots(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
  ): Promise<SnapshotResponse[]> {
    return this.datasets.snapshots(access, id);
  }

  /** Versions, newest first (viewers). */
  @Get(':dataset_id/versions')
  @ApiOperation({ operationId: 'listDatasetVersions' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: PageOf(DatasetVersionResponse) })
  versionList(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @Query() query: ListVersionsQuery,
  ): Promise<Page<DatasetVersionResponse>> {
    return this.versions.list(access, id, query);
  }

  /** A signed, expiring URL that downloads a version as CSV, JSON Lines or Parquet without a token (viewers). */
  @Get(':dataset_id/download-url')
  @ApiOperation({ operationId: 'getDatasetDownloadUrl' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: PresignedUrlResponse })
  async downloadUrl(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @Query() query: DatasetDownloadQuery,
    @RequestOrigin() origin: string,
  ): Promise<PresignedUrlResponse> {
    const dataset = await this.datasets.require(access, id);
    const version = await this.datasets.resolveVersion(dataset, query.version_id);
    return this.downloads.presign(origin, dataset.name, version, query.format, query.expires_in);
  }

  /** Filters, sorts, projects and pages a version's rows (viewers); see docs/query-language.md. */
  @Post(':dataset_id/query')
  @ApiOperation({ operationId: 'queryDataset' })
  @HttpCode(200)
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: QueryResponse })
  async runQuery(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @Body() body: DatasetQueryRequest,
  ): Promise<QueryResponse> {
    const dataset = await this.datasets.require(access, id);
    return this.query.query(await this.datasets.resolveVersion(dataset, body.version_id), body);
  }
}
