import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../../../../libs/auth/roles.js';
import { PageQueryDto } from '../../../../libs/common/pagination.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
const bool = ({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value);
// Optional, but never null: an explicit null is refused (400) rather than written over a required column.
const present = (_: object, value: unknown) => value !== undefined;

export const WORKSPACE_SORTS = ['name', '-name', 'created_at', '-created_at'] as const;

export class ListWorkspacesQuery extends PageQueryDto {
  /** Case-insensitive substring of the name */
  @IsOptional() @IsString() @MaxLength(200)
  q?: string;

  /** System admins see every workspace; `mine=true` restricts to their memberships */
  @IsOptional() @Transform(bool) @IsBoolean()
  mine?: boolean;

  @ApiPropertyOptional({ enum: WORKSPACE_SORTS, default: 'name' })
  @IsOptional() @IsIn(WORKSPACE_SORTS)
  sort?: (typeof WORKSPACE_SORTS)[number];
}

export class CreateWorkspaceRequest {
  /** 1..100 characters, trimmed; need not be unique */
  @Transform(trim) @IsString() @MinLength(1) @MaxLength(100)
  name: string;

  @ValidateIf(present) @IsString() @MaxLength(2000)
  description?: string;
}

export class UpdateWorkspaceRequest {
  @ValidateIf(present) @Transform(trim) @IsString() @MinLength(1) @MaxLength(100)
  name?: string;

  /** Send `""` to clear it */
  @ValidateIf(present) @IsString() @MaxLength(2000)
  description?: string;
}

export class EmbeddingConfigRequest {
  /** `local`: the built-in embedder (no network, the default). `remote`: a config of GET /embedding-configs. */
  @ApiProperty({ enum: ['local', 'remote'] })
  @IsIn(['local', 'remote'])
  provider: 'local' | 'remote';

  /** Name or id of the embedding config; required when provider is `remote`, refused when `local` */
  @ValidateIf((o: EmbeddingConfigRequest) => o.provider === 'remote' || o.config_ref !== undefined)
  @IsString() @MinLength(1) @MaxLength(200)
  config_ref?: string;

  /** Model name, overriding the config's (e.g. `text-embedding-3-small`) */
  @ValidateIf(present) @IsString() @Matches(/^[A-Za-z0-9._:/@-]{1,200}$/)
  model?: string;

  /** Vector size, 1..8192 */
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 8192 })
  @ValidateIf(present) @IsInt() @Min(1) @Max(8192)
  dimensions?: number;
}

export class EmbeddingConfig {
  @ApiProperty({ enum: ['local', 'remote'] })
  provider: 'local' | 'remote';
  config_ref?: string;
  model?: string;
  @ApiPropertyOptional({ type: 'integer' })
  dimensions?: number;
}

export class WorkspaceResponse {
  id: string;
  name: string;
  description: string;
  embedding_config: EmbeddingConfig;
  /** The caller's role; null for a system admin who is not a member */
  @ApiProperty({ enum: WORKSPACE_ROLES, nullable: true })
  role: WorkspaceRole | null;
  member_count: number;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  version: number;
}

export class WorkspaceListItem {
  id: string;
  name: string;
  description: string;
  @ApiProperty({ enum: WORKSPACE_ROLES, nullable: true })
  role: WorkspaceRole | null;
  member_count: number;
  created_at: Date;
  updated_at: Date;
}
