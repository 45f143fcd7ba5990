import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { WORKSPACE_ROLES, type WorkspaceRole } from '#libs/auth/roles.js';
import { PageQueryDto } from '#libs/common/pagination.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';

// Values the examples below share.
const EXAMPLE_DESCRIPTION = 'Evaluations of the support assistant before each release';

const bool = ({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value);

export const WORKSPACE_SORTS = ['name', '-name', 'created_at', '-created_at'] as const;

export class ListWorkspacesQuery extends PageQueryDto {
  /** Case-insensitive substring of the name */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  q?: string;

  /** System admins see every workspace; `mine=true` restricts to their memberships */
  @IsOptional()
  @Transform(bool)
  @IsBoolean()
  mine?: boolean;

  @ApiPropertyOptional({ enum: WORKSPACE_SORTS, default: 'name' })
  @IsOptional()
  @IsIn(WORKSPACE_SORTS)
  sort?: (typeof WORKSPACE_SORTS)[number];
}

export class CreateWorkspaceRequest {
  /** 1..100 characters, trimmed; need not be unique */
  @ApiProperty({ example: EXAMPLE_NAME.workspace })
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  name: string;

  @ApiPropertyOptional({ example: EXAMPLE_DESCRIPTION })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;
}

export class UpdateWorkspaceRequest {
  @ApiPropertyOptional({ example: EXAMPLE_NAME.workspace })
  @ValidateIfPresent()
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  name?: string;

  /** Send `""` to clear it */
  @ApiPropertyOptional({ example: 'Evaluations of the support assistant and its retrieval' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;
}

@ApiSchemaExample({
  provider: 'remote',
  config_ref: EXAMPLE_NAME.embeddingConfig,
  model: 'text-embedding-3-small',
  dimensions: 512,
})
export class EmbeddingConfigRequest {
  /** `local`: the built-in embedder (no network, the default). `remote`: a config of GET /embedding-configs. */
  @ApiProperty({ enum: ['local', 'remote'], example: 'remote' })
  @IsIn(['local', 'remote'])
  provider: 'local' | 'remote';

  /** Name or id of the embedding config; required when provider is `remote`, refused when `local` */
  @ApiPropertyOptional({ example: EXAMPLE_NAME.embeddingConfig })
  @ValidateIf((o: EmbeddingConfigRequest) => o.provider === 'remote' || o.config_ref !== undefined)
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  config_ref?: string;

  /** Model name, overriding the config's (e.g. `text-embedding-3-small`) */
  @ApiPropertyOptional({ example: 'text-embedding-3-small' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  @Matches(/^[A-Za-z0-9._:/@-]{1,200}$/)
  model?: string;

  /** Vector size, 1..8192 */
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 8192, example: 512 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(8192)
  dimensions?: number;
}

export class EmbeddingConfig {
  @ApiProperty({ enum: ['local', 'remote'], example: 'remote' })
  provider: 'local' | 'remote';
  @ApiPropertyOptional({ example: EXAMPLE_NAME.embeddingConfig })
  config_ref?: string;
  @ApiPropertyOptional({ example: 'text-embedding-3-small' })
  model?: string;
  @ApiPropertyOptional({ type: 'integer', example: 512 })
  dimensions?: number;
}

export class WorkspaceResponse {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  id: string;
  @ApiProperty({ example: EXAMPLE_NAME.workspace })
  name: string;
  @ApiProperty({ example: EXAMPLE_DESCRIPTION })
  description: string;
  embedding_config: EmbeddingConfig;
  /** The caller's role; null for a system admin who is not a member */
  @ApiProperty({ enum: WORKSPACE_ROLES, nullable: true, example: 'owner' })
  role: WorkspaceRole | null;
  @ApiProperty({ example: 4 })
  member_count: number;
  @ApiProperty({ example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
  @ApiProperty({ example: 2 })
  version: number;
}

export class WorkspaceListItem {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  id: string;
  @ApiProperty({ example: EXAMPLE_NAME.workspace })
  name: string;
  @ApiProperty({ example: EXAMPLE_DESCRIPTION })
  description: string;
  @ApiProperty({ enum: WORKSPACE_ROLES, nullable: true, example: 'owner' })
  role: WorkspaceRole | null;
  @ApiProperty({ example: 4 })
  member_count: number;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}
