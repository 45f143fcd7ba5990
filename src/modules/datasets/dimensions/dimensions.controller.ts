import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { DimensionsService } from './dimensions.service.js';
import {
  AssignDimensionRequest,
  AssignDimensionResponse,
  CreatePartitionRequest,
  DatasetDimensionsQueryResponse,
  DatasetDimensionsResponse,
  DatasetVersionAvailableMetricsResponse,
  DimensionsQueryRequest,
  DimensionValuesQuery,
  DimensionValuesResponse,
  PartitionAvailableMetricsResponse,
  PartitionResponse,
  ResolvePartitionQuery,
  SessionPartition,
  SpanPartition,
  TracePartition,
} from '../dto/dimensions.dto.js';
import { PartitionsService } from './partitions.service.js';
import { VersionsService } from '../versions/versions.service.js';

const DATASET = { resource: 'dataset', param: 'dataset_id' };

/** Assigning dimension values to a dataset's rows. */
@ApiTags('dataset dimensions')
@Controller('datasets/:dataset_id')
export class DimensionAssignController {
  constructor(private readonly dimensions: DimensionsService) {}

  /** Assigns a dimension value to rows given by id or by a rule in the query language (members); creates the dimension and value on first use. */
  @Post('dimensions\\:assign')
  @ApiOperation({ operationId: 'assignDimensionValue' })
  @WorkspaceRoleRequired('member', DATASET)
  @ApiCreatedResponse({ type: AssignDimensionResponse })
  assign(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @Body() body: AssignDimensionRequest,
    @CurrentUser() caller: Principal,
  ): Promise<AssignDimensionResponse> {
    return this.dimensions.assign(access, id, body, caller);
  }
}

/** Dimensions, partitions and applicable metrics of one version. */
@ApiTags('dataset dimensions')
@ApiExtraModels(SessionPartition, TracePartition, SpanPartition)
@Controller('datasets/:dataset_id/versions/:version_id')
export class VersionDimensionsController {
  constructor(
    private readonly versions: VersionsService,
    private readonly dimensions: DimensionsService,
    private readonly partitions: PartitionsService,
  ) {}

  /** Every dimension with its values and how many of the version's rows carry each (viewers). */
  @Get('dimensions')
  @ApiOperation({ operationId: 'listDimensions' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: DatasetDimensionsResponse })
  async summary(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
  ): Promise<DatasetDimensionsResponse> {
    const { dataset, version } = await this.versions.require(access, id, versionId);
    return this.dimensions.summary(dataset, version);
  }

  /** (dimension, value) pairs with row counts and shares (viewers). */
  @Get('dimensions/values')
  @ApiOperation({ operationId: 'listDimensionValues' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: DimensionValuesResponse })
  async values(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
    @Query() query: DimensionValuesQuery,
  ): Promise<DimensionValuesResponse> {
    const { dataset, version } = await this.versions.require(access, id, versionId);
    return this.dimensions.values(dataset, version, query.dimension);
  }

  /** Rows by dimension values (and a filter), with counts per combination of the grouping dimensions (viewers). */
  @Post('dimensions/query')
  @ApiOperation({ operationId: 'queryDimensions' })
  @HttpCode(200)
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: DatasetDimensionsQueryResponse })
  async query(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
    @Body() body: DimensionsQueryRequest,
  ): Promise<DatasetDimensionsQueryResponse> {
    const { dataset, version } = await this.versions.require(access, id, versionId);
    return this.dimensions.queryRows(dataset, version, body);
  }

  /** The built-in metrics the version's mapping supports, and what the others lack (viewers). */
  @Get('available-metrics')
  @ApiOperation({ operationId: 'listAvailableMetrics' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: DatasetVersionAvailableMetricsResponse })
  async availableMetrics(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
  ): Promise<DatasetVersionAvailableMetricsResponse> {
    const { version } = await this.versions.require(access, id, versionId);
    return this.partitions.availableMetrics(version);
  }

  /** The version's partitions with their current row counts (viewers). */
  @Get('partitions')
  @ApiOperation({ operationId: 'listPartitions' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: [PartitionResponse] })
  async listPartitions(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
  ): Promise<PartitionResponse[]> {
    const { version } = await this.versions.require(access, id, versionId);
    return this.partitions.list(version);
  }

  /** Saves a slice of the version by dimension values and/or a filter (members). */
  @Post('partitions')
  @ApiOperation({ operationId: 'createPartition' })
  @WorkspaceRoleRequired('member', DATASET)
  @ApiCreatedResponse({ type: PartitionResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'partition_name_taken' })
  async createPartition(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
    @Body() body: CreatePartitionRequest,
    @CurrentUser() caller: Principal,
  ): Promise<PartitionResponse> {
    const { dataset, version } = await this.versions.require(access, id, versionId);
    return this.partitions.create(access, dataset, version, body, caller);
  }

  /** Deletes a partition (members). */
  @Delete('partitions/:partition_id')
  @ApiOperation({ operationId: 'deletePartition' })
  @HttpCode(204)
  @WorkspaceRoleRequired('member', DATASET)
  @ApiNoContentResponse({ description: 'Deleted' })
  async deletePartition(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
    @UuidParam('partition_id') partitionId: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    const { version } = await this.versions.require(access, id, versionId);
    await this.partitions.delete(access, id, version, partitionId, caller);
  }

  /** The metrics the partition can be scored with (viewers). */
  @Get('partitions/:partition_id/available-metrics')
  @ApiOperation({ operationId: 'listAvailablePartitionMetrics' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: PartitionAvailableMetricsResponse })
  async partitionMetrics(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
    @UuidParam('partition_id') partitionId: string,
  ): Promise<PartitionAvailableMetricsResponse> {
    const { version } = await this.versions.require(access, id, versionId);
    return this.partitions.partitionMetrics(version, partitionId);
  }

  /** The partition's members, paged: sessions of rows for test-case datasets (traces and spans for trace datasets) (viewers). */
  @Post('partitions/:partition_id/resolve')
  @ApiOperation({ operationId: 'resolvePartition' })
  @HttpCode(200)
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({
    schema: {
      type: 'array',
      items: {
        oneOf: [
          { $ref: getSchemaPath(SessionPartition) },
          { $ref: getSchemaPath(TracePartition) },
          { $ref: getSchemaPath(SpanPartition) },
        ],
      },
    },
  })
  async resolve(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @UuidParam('version_id') versionId: string,
    @UuidParam('partition_id') partitionId: string,
    @Query() query: ResolvePartitionQuery,
  ): Promise<Array<SessionPartition | TracePartition | SpanPartition>> {
    const { version } = await this.versions.require(access, id, versionId);
    return this.partitions.resolve(version, partitionId, query);
  }
}
