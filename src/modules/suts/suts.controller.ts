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
import { Authenticated, CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { PageOf, type Page } from '#libs/common/pagination.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { SUT_TEMPLATES } from '#libs/evaluation/sut/templates.js';
import { CreateSutRequest, ListSutsQuery, SutResponse, UpdateSutRequest } from './dto/sut.dto.js';
import { SutTemplateList } from './dto/template.dto.js';
import { SutsService } from './suts.service.js';
import { IfMatch, WithETag } from '#libs/common/etag.decorators.js';
import type { IfMatchPrecondition } from '#libs/common/etag.js';
import { sutEtag } from './suts.mapper.js';

export const SUT = { resource: 'sut', param: 'sut_id' } as const;

@ApiTags('suts')
@Controller('suts')
export class SutsController {
  constructor(private readonly suts: SutsService) {}

  /** The workspace's systems under test, by name (viewers); `q` searches names, `tag` filters. */
  @Get()
  @ApiOperation({ operationId: 'listSuts' })
  @WorkspaceRoleRequired('viewer', { query: 'workspace_id' })
  @ApiOkResponse({ type: PageOf(SutResponse) })
  list(@CurrentWorkspace() access: WorkspaceAccess, @Query() query: ListSutsQuery): Promise<Page<SutResponse>> {
    return this.suts.list(access, query);
  }

  /** Registers a system under test (members); reach it by adding connections. */
  @Post()
  @ApiOperation({ operationId: 'createSut' })
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: SutResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'sut_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateSutRequest,
    @CurrentUser() caller: Principal,
  ): Promise<SutResponse> {
    return this.suts.create(access, body, caller);
  }

  /** Ready connection + adapter templates: OpenAI-compatible chat, generic JSON REST, Anthropic messages, Azure OpenAI, a RAG endpoint (any signed-in user). */
  @Get('templates')
  @ApiOperation({ operationId: 'listSutTemplates' })
  @Authenticated()
  @ApiOkResponse({ type: SutTemplateList })
  templates(): SutTemplateList {
    return { items: [...SUT_TEMPLATES], total: SUT_TEMPLATES.length };
  }

  /** One system (viewers); the ETag serves If-Match on PATCH. */
  @Get(':sut_id')
  @ApiOperation({ operationId: 'getSut' })
  @WorkspaceRoleRequired('viewer', SUT)
  @ApiOkResponse({ type: SutResponse })
  @WithETag(sutEtag)
  get(@CurrentWorkspace() access: WorkspaceAccess, @UuidParam('sut_id') id: string): Promise<SutResponse> {
    return this.suts.get(access, id);
  }

  /** Renames, re-describes or re-tags (members). Honours If-Match. */
  @Patch(':sut_id')
  @ApiOperation({ operationId: 'updateSut' })
  @WorkspaceRoleRequired('member', SUT)
  @ApiOkResponse({ type: SutResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'sut_name_taken' })
  @ApiPreconditionFailedResponse({ type: ProblemResponse, description: 'If-Match does not match the current ETag' })
  @WithETag(sutEtag)
  update(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('sut_id') id: string,
    @Body() body: UpdateSutRequest,
    @IfMatch() ifMatch: IfMatchPrecondition,
    @CurrentUser() caller: Principal,
  ): Promise<SutResponse> {
    return this.suts.update(access, id, body, ifMatch, caller);
  }

  /** Deletes the system with its connections and adapters (admins). */
  @Delete(':sut_id')
  @ApiOperation({ operationId: 'deleteSut' })
  @HttpCode(204)
  @WorkspaceRoleRequired('admin', SUT)
  @ApiNoContentResponse({ description: 'Deleted' })
  async delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('sut_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.suts.delete(access, id, caller);
  }
}
