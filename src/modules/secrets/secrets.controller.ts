import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPreconditionFailedResponse,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import {
  CreateSecretRequest,
  ListSecretsQuery,
  UpdateSecretRequest,
  WorkspaceSecretResponse,
  WorkspaceSecretRevealResponse,
} from './dto/secret.dto.js';
import { SecretsService } from './secrets.service.js';
import { IfMatch, WithETag } from '#libs/common/etag.decorators.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { secretEtag } from './secrets.mapper.js';

const WORKSPACE = { param: 'workspace_id' };

@ApiTags('secrets')
@Controller('workspaces/:workspace_id/secrets')
export class SecretsController {
  constructor(private readonly secrets: SecretsService) {}

  /** Secret metadata (members; never values). */
  @Get()
  @ApiOperation({ operationId: 'listSecrets' })
  @WorkspaceRoleRequired('member', WORKSPACE)
  @ApiOkResponse({ type: PageOf(WorkspaceSecretResponse) })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ListSecretsQuery,
  ): Promise<Page<WorkspaceSecretResponse>> {
    return this.secrets.list(access, query);
  }

  /** Stores a secret, encrypted at rest (admins). */
  @Post()
  @ApiOperation({ operationId: 'createSecret' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiCreatedResponse({ type: WorkspaceSecretResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'secret_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateSecretRequest,
    @CurrentUser() caller: Principal,
  ): Promise<WorkspaceSecretResponse> {
    return this.secrets.create(access, body, caller);
  }

  /** A secret's metadata (members), with an ETag for If-Match on PATCH. */
  @Get(':secret_id')
  @ApiOperation({ operationId: 'getSecret' })
  @WorkspaceRoleRequired('member', WORKSPACE)
  @ApiOkResponse({ type: WorkspaceSecretResponse })
  @WithETag(secretEtag)
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('secret_id') id: string,
  ): Promise<WorkspaceSecretResponse> {
    return this.secrets.get(access, id);
  }

  /** Renames, re-describes or replaces the value (admins). */
  @Patch(':secret_id')
  @ApiOperation({ operationId: 'updateSecret' })
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: WorkspaceSecretResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'secret_name_taken' })
  @ApiPreconditionFailedResponse({ type: ProblemResponse, description: 'If-Match does not match the current ETag' })
  @WithETag(secretEtag)
  update(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('secret_id') id: string,
    @Body() body: UpdateSecretRequest,
    @IfMatch() ifMatch: IfMatchPrecondition,
    @CurrentUser() caller: Principal,
  ): Promise<WorkspaceSecretResponse> {
    return this.secrets.update(access, id, body, ifMatch, caller);
  }

  /** Returns the value (admins). Audited as secret.revealed. */
  @Post(':secret_id/reveal')
  @ApiOperation({ operationId: 'revealSecret' })
  @HttpCode(200)
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiOkResponse({ type: WorkspaceSecretRevealResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'secret_undecryptable' })
  reveal(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('secret_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<WorkspaceSecretRevealResponse> {
    return this.secrets.reveal(access, id, caller);
  }

  /** Deletes the secret (admins). */
  @Delete(':secret_id')
  @ApiOperation({ operationId: 'deleteSecret' })
  @HttpCode(204)
  @WorkspaceRoleRequired('admin', WORKSPACE)
  @ApiNoContentResponse({ description: 'Deleted' })
  async delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('secret_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.secrets.delete(access, id, caller);
  }
}
