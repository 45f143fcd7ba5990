import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import {
  CreateRecommendationRequest,
  ListRecommendationsQuery,
  RecommendationDefinition,
  RecommendationWorkspaceQuery,
  TestPackageRecommendation,
} from './dto/recommendation.dto.js';
import { RecommendationsService } from './recommendations.service.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

const IN_WORKSPACE = { query: 'workspace_id' } as const;
const ID = {
  name: 'recommendation_id',
  description: '`builtin-<template>` for a built-in recommendation, else the UUID of a workspace recommendation',
};

@ApiTags('test packages')
@Controller('test-packages/recommendations')
export class RecommendationsController {
  constructor(private readonly recommendations: RecommendationsService) {}

  /** The built-in recommendations (one per project template) and the workspace's own (viewers). */
  @Get()
  @ApiOperation({ operationId: 'listRecommendations' })
  @WorkspaceRoleRequired('viewer', IN_WORKSPACE)
  @ApiOkResponse({ type: [TestPackageRecommendation] })
  list(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Query() query: ListRecommendationsQuery,
  ): Promise<TestPackageRecommendation[]> {
    return this.recommendations.list(access, query);
  }

  /** A workspace recommendation (members): metrics, quality checks and dimensions for a use case. */
  @Post()
  @ApiOperation({ operationId: 'createRecommendation' })
  @WorkspaceRoleRequired('member', { body: 'workspace_id' })
  @ApiCreatedResponse({ type: TestPackageRecommendation })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'recommendation_name_taken' })
  create(
    @CurrentWorkspace() access: WorkspaceAccess,
    @Body() body: CreateRecommendationRequest,
    @CurrentUser() caller: Principal,
  ): Promise<TestPackageRecommendation> {
    return this.recommendations.create(access, body, caller);
  }

  /** One recommendation, built-in or the workspace's (viewers). */
  @Get(':recommendation_id')
  @ApiOperation({ operationId: 'getRecommendation' })
  @WorkspaceRoleRequired('viewer', IN_WORKSPACE)
  @ApiParam(ID)
  @ApiOkResponse({ type: TestPackageRecommendation })
  get(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('recommendation_id', PATH_TEXT.name) id: string,
    @Query() _query: RecommendationWorkspaceQuery,
  ): Promise<TestPackageRecommendation> {
    return this.recommendations.get(access, id);
  }

  /** Replaces a workspace recommendation (members); built-ins are read-only (403 builtin_recommendation_read_only). */
  @Put(':recommendation_id')
  @ApiOperation({ operationId: 'replaceRecommendation' })
  @WorkspaceRoleRequired('member', IN_WORKSPACE)
  @ApiParam(ID)
  @ApiOkResponse({ type: TestPackageRecommendation })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'recommendation_name_taken' })
  replace(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('recommendation_id', PATH_TEXT.name) id: string,
    @Query() _query: RecommendationWorkspaceQuery,
    @Body() body: RecommendationDefinition,
    @CurrentUser() caller: Principal,
  ): Promise<TestPackageRecommendation> {
    return this.recommendations.replace(access, id, body, caller);
  }

  /** Deletes a workspace recommendation (members); built-ins are read-only (403 builtin_recommendation_read_only). */
  @Delete(':recommendation_id')
  @ApiOperation({ operationId: 'deleteRecommendation' })
  @HttpCode(204)
  @WorkspaceRoleRequired('member', IN_WORKSPACE)
  @ApiParam(ID)
  @ApiNoContentResponse({ description: 'Deleted' })
  async delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @TextParam('recommendation_id', PATH_TEXT.name) id: string,
    @Query() _query: RecommendationWorkspaceQuery,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.recommendations.delete(access, id, caller);
  }
}
