import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import { WorkspaceMetricCatalogue } from '../dto/metric-catalogue.dto.js';
import { MetricCatalogueService } from './metric-catalogue.service.js';

@ApiTags('metrics')
@Controller('workspaces/:workspace_id/metrics')
export class MetricCatalogueController {
  constructor(private readonly metrics: MetricCatalogueService) {}

  /** The metrics the workspace can score runs with, what each needs from a dataset, and its parameter schema (viewers). */
  @Get()
  @ApiOperation({ operationId: 'listMetrics' })
  @WorkspaceRoleRequired('viewer', { param: 'workspace_id' })
  @ApiOkResponse({ type: WorkspaceMetricCatalogue })
  catalogue(@CurrentWorkspace() access: WorkspaceAccess): Promise<WorkspaceMetricCatalogue> {
    return this.metrics.catalogue(access.workspaceId);
  }
}
