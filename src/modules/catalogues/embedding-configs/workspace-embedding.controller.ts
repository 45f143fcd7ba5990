import { Body, Controller, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiPreconditionFailedResponse, ApiTags } from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { IfMatch, WithETag } from '#libs/common/etag.decorators.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { EmbeddingConfigRequest, WorkspaceResponse } from '../../workspaces/dto/workspace.dto.js';
import { workspaceEtag } from '../../workspaces/workspaces.mapper.js';
import { EmbeddingConfigsService } from './embedding-configs.service.js';

/** A workspace's choice of embedding config is served by the family that keeps the configs. */
@ApiTags('workspaces')
@Controller('workspaces')
export class WorkspaceEmbeddingController {
  constructor(private readonly configs: EmbeddingConfigsService) {}

  /** How the workspace embeds text for clustering and similarity (admins). `local` needs no network. Honours If-Match. */
  @Put(':workspace_id/embedding-config')
  @ApiOperation({ operationId: 'setWorkspaceEmbeddingConfig' })
  @WorkspaceRoleRequired('admin', { param: 'workspace_id' })
  @ApiOkResponse({ type: WorkspaceResponse })
  @ApiPreconditionFailedResponse({ type: ProblemResponse, description: 'If-Match does not match the current ETag' })
  @WithETag(workspaceEtag)
  setEmbeddingConfig(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: EmbeddingConfigRequest,
    @IfMatch() ifMatch: IfMatchPrecondition,
    @CurrentUser() caller: Principal,
  ): Promise<WorkspaceResponse> {
    return this.configs.choose(access, body, ifMatch, caller);
  }
}
