import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { ApiKeysService } from './api-keys.service.js';
import { ApiKeyCreatedResponse, ApiKeyResponse, CreateApiKeyRequest, ListApiKeysQuery } from './dto/api-key.dto.js';

const WORKSPACE = { param: 'workspace_id' };

/** Machine credentials: an addition beside the operations of the specification (docs/api-conventions.md). */
@ApiTags('api-keys')
@Controller('workspaces/:workspace_id/api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  /** Keys of the workspace (admins: all of them; other members: their own), newest first; never the keys themselves. */
  @Get()
  @ApiOperation({ operationId: 'listApiKeys' })
  @WorkspaceRoleRequired('viewer', WORKSPACE)
  @ApiOkResponse({ type: PageOf(ApiKeyResponse) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ListApiKeysQuery,
    @CurrentUser() caller: Principal,
  ): Promise<Page<ApiKeyResponse>> {
    return this.apiKeys.list(access, query, caller);
  }

  /**
   * Creates a key that acts for you in this workspace, with a role no higher than yours and an
   * optional expiry (any member, with a user's token). The key is in this answer only: send it as
   * `Authorization: Bearer <key>`. Audited as api_key.created.
   */
  @Post()
  @ApiOperation({ operationId: 'createApiKey' })
  @WorkspaceRoleRequired('viewer', WORKSPACE, { apiKeys: false })
  @ApiCreatedResponse({ type: ApiKeyCreatedResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'api_key_limit_reached' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateApiKeyRequest,
    @CurrentUser() caller: Principal,
  ): Promise<ApiKeyCreatedResponse> {
    return this.apiKeys.create(access, body, caller);
  }

  /** One key's metadata (its creator, or an admin). */
  @Get(':api_key_id')
  @ApiOperation({ operationId: 'getApiKey' })
  @WorkspaceRoleRequired('viewer', WORKSPACE)
  @ApiOkResponse({ type: ApiKeyResponse })
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('api_key_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<ApiKeyResponse> {
    return this.apiKeys.get(access, id, caller);
  }

  /** Revokes the key at once (its creator, or an admin); it answers 401 from the next call. Audited as api_key.revoked. */
  @Delete(':api_key_id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'revokeApiKey' })
  @WorkspaceRoleRequired('viewer', WORKSPACE)
  @ApiNoContentResponse({ description: 'Revoked (or already revoked)' })
  async revoke(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('api_key_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.apiKeys.revoke(access, id, caller);
  }
}
