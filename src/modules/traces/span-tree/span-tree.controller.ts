import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { SpanChildrenQuery, SpansByDepthQuery, SpanTreePage } from '../dto/span-tree.dto.js';
import { SpanTreeService } from './span-tree.service.js';

const DATASET = { resource: 'dataset', param: 'dataset_id' } as const;

/** A landed trace of a trace dataset's version read back as a tree, a page at a time. */
@ApiTags('traces')
@Controller('datasets/:dataset_id/versions/:version_id/span-tree')
export class SpanTreeController {
  constructor(private readonly spanTree: SpanTreeService) {}

  /** The spans directly under a span of a trace (without `parent_span_id`, the trace's roots and orphans), in start order, each with its child count; keyset pages of at most 1000 (viewers). */
  @Get('children')
  @ApiOperation({ operationId: 'listTraceSpanChildren' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: SpanTreePage })
  children(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @Query() query: SpanChildrenQuery,
  ): Promise<SpanTreePage> {
    return this.spanTree.children(access, datasetId, versionId, query);
  }

  /** Every span of a trace at depth `max_depth` or above (a root is 1), level by level in start order, each with its depth and child count; keyset pages of at most 1000 (viewers). */
  @Get('by-depth')
  @ApiOperation({ operationId: 'listTraceSpansByDepth' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: SpanTreePage })
  byDepth(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') datasetId: string,
    @UuidParam('version_id') versionId: string,
    @Query() query: SpansByDepthQuery,
  ): Promise<SpanTreePage> {
    return this.spanTree.byDepth(access, datasetId, versionId, query);
  }
}
