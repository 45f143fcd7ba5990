import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import {
  CreateEmbeddingConfigRequest,
  EmbeddingConfigResponse,
  ListEmbeddingConfigsQuery,
  WorkspaceQuery,
} from '../dto/embedding-config.dto.js';
import { EmbeddingConfigsService } from './embedding-configs.service.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

@ApiTags('embedding configs')
@Controller('embedding-configs')
export class EmbeddingConfigsController {
  constructor(private readonly configs: EmbeddingConfigsService) {}

  /** The built-in local embedder and the workspace's remote configs (viewers); `in_use` marks the workspace's choice. */
  @Get()
  @ApiOperation({ operationId: 'listEmbeddingConfigs' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: PageOf(EmbeddingConfigResponse) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ListEmbeddingConfigsQuery,
  ): Promise<Page<EmbeddingConfigResponse>> {
    return this.configs.list(access, query);
  }

  /** Adds a remote embeddings endpoint (admins); its API key is a workspace secret, by reference. */
  @Post()
  @ApiOperation({ operationId: 'createEmbeddingConfig' })
  @WorkspaceRoleRequired('admin', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: EmbeddingConfigResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'embedding_config_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateEmbeddingConfigRequest,
    @CurrentUser() caller: Principal,
  ): Promise<EmbeddingConfigResponse> {
    return this.configs.create(access, body, caller);
  }

  /** A config by id or name (`local` is the built-in embedder) (viewers). */
  @Get(':config_ref')
  @ApiOperation({ operationId: 'getEmbeddingConfig' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: EmbeddingConfigResponse })
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('config_ref', PATH_TEXT.name) ref: string,
    @Query() _query: WorkspaceQuery,
  ): Promise<EmbeddingConfigResponse> {
    return this.configs.get(access, ref);
  }
}
