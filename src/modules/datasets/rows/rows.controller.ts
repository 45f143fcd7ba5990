import { Body, Controller, Delete, Get, HttpCode, Patch, Post } from '@nestjs/common';
import { ApiConflictResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser, CurrentWorkspace, WorkspaceRoleRequired } from '#libs/auth/access.decorators.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import {
  CommitRowsRequest,
  DeleteRowsRequest,
  InsertRowsRequest,
  RowOperationResponse,
  StagedEditResponse,
  UpdateRowsRequest,
} from '../dto/rows.dto.js';
import { RowsService } from './rows.service.js';

const DATASET = { resource: 'dataset', param: 'dataset_id' };

/** Staged row edits and their commit into a new version (members). */
@ApiTags('datasets')
@Controller('datasets/:dataset_id/rows')
export class RowsController {
  constructor(private readonly rows: RowsService) {}

  /** Stages rows for insertion (1..1000); answers them with their `_row_id`. */
  @Post('insert')
  @ApiOperation({ operationId: 'insertRows' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', DATASET)
  @ApiOkResponse({ schema: { type: 'array', items: { type: 'object', additionalProperties: true } } })
  @ApiConflictResponse({ type: ProblemResponse, description: 'row_exists, row_edit_conflict' })
  insert(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @Body() body: InsertRowsRequest,
    @CurrentUser() caller: Principal,
  ): Promise<Array<Record<string, unknown>>> {
    return this.rows.insert(access, id, body, caller);
  }

  /** Stages new values for rows by id; answers row id -> the row as it will be. */
  @Patch('update')
  @ApiOperation({ operationId: 'updateRows' })
  @WorkspaceRoleRequired('member', DATASET)
  @ApiOkResponse({ schema: { type: 'object', additionalProperties: { type: 'object', additionalProperties: true } } })
  @ApiConflictResponse({ type: ProblemResponse, description: 'row_edit_conflict' })
  update(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @Body() body: UpdateRowsRequest,
    @CurrentUser() caller: Principal,
  ): Promise<Record<string, Record<string, unknown>>> {
    return this.rows.update(access, id, body, caller);
  }

  /** Stages rows for deletion by id; answers the ids staged. */
  @Post('delete')
  @ApiOperation({ operationId: 'deleteRows' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', DATASET)
  @ApiOkResponse({ schema: { type: 'array', items: { type: 'string', format: 'uuid' } } })
  @ApiConflictResponse({ type: ProblemResponse, description: 'row_edit_conflict' })
  delete(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @Body() body: DeleteRowsRequest,
    @CurrentUser() caller: Principal,
  ): Promise<string[]> {
    return this.rows.delete(access, id, body, caller);
  }

  /** Turns every staged edit into a new immutable version, in one transaction. */
  @Post('commit')
  @ApiOperation({ operationId: 'commitStagedRows' })
  @HttpCode(200)
  @WorkspaceRoleRequired('member', DATASET)
  @ApiOkResponse({ type: RowOperationResponse })
  @ApiConflictResponse({ type: ProblemResponse, description: 'nothing_to_commit, stale_edits' })
  commit(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @Body() body: CommitRowsRequest,
    @CurrentUser() caller: Principal,
  ): Promise<RowOperationResponse> {
    return this.rows.commit(access, id, body, caller);
  }

  /** The staged edits, oldest first (viewers). */
  @Get('staged')
  @ApiOperation({ operationId: 'listStagedRows' })
  @WorkspaceRoleRequired('viewer', DATASET)
  @ApiOkResponse({ type: [StagedEditResponse] })
  staged(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
  ): Promise<StagedEditResponse[]> {
    return this.rows.staged(access, id);
  }

  /** Discards every staged edit (members). */
  @Delete('staged')
  @ApiOperation({ operationId: 'discardStagedRows' })
  @HttpCode(204)
  @WorkspaceRoleRequired('member', DATASET)
  @ApiNoContentResponse({ description: 'Discarded' })
  async discard(
    @CurrentWorkspace() access: WorkspaceAccess,
    @UuidParam('dataset_id') id: string,
    @CurrentUser() caller: Principal,
  ): Promise<void> {
    await this.rows.discard(access, id, caller);
  }
}
