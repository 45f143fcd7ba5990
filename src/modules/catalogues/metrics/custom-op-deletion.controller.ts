import { Controller, Delete, HttpCode } from '@nestjs/common';
import { ApiConflictResponse, ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { MetricConfigsService } from './metric-configs.service.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

/** Deleting a custom op is answered by the family whose metric configs may still score with it. */
@ApiTags('ops')
@Controller('workspaces/:workspace_id')
export class CustomOpDeletionController {
  constructor(private readonly metricConfigs: MetricConfigsService) {}

  /** Deletes a stopped op with its revisions and the ops it serves (admins). */
  @Delete('custom_ops/:name')
  @ApiOperation({ operationId: 'deleteCustomOp' })
  @HttpCode(204)
  @WorkspaceRoleRequired('admin', { param: 'workspace_id' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'custom_op_not_stopped, custom_op_in_use' })
  async delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('name', PATH_TEXT.name) name: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.metricConfigs.deleteCustomOp(access, name, caller);
  }
}
