import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsString, IsUrl, IsUUID, Max, MaxLength, Min, MinLength } from 'class-validator';
import { PageQueryDto } from '#libs/common/pagination.js';
import { catalogueEntryRequest } from './catalogue-entry.dto.js';
import { REMOTE_EMBEDDING_PROVIDERS, type RemoteEmbeddingProvider } from '../entities/embedding-config.entity.js';
import { EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

export class WorkspaceQuery {
  /** The workspace whose configurations these are */
  @IsUUID()
  workspace_id: string;
}

export class ListEmbeddingConfigsQuery extends PageQueryDto {
  /** The workspace whose configurations to list */
  @IsUUID()
  workspace_id: string;
}

export class CreateEmbeddingConfigRequest extends catalogueEntryRequest({
  creator: 'admin',
  name: EXAMPLE_NAME.embeddingConfig,
  description: 'OpenAI small embeddings for clustering and semantic metrics',
}) {
  @ApiProperty({ enum: REMOTE_EMBEDDING_PROVIDERS, example: 'openai_compatible' })
  @IsIn(REMOTE_EMBEDDING_PROVIDERS)
  provider: RemoteEmbeddingProvider;

  /** The API's base URL, e.g. https://api.openai.com/v1 (embeddings are POSTed to `{base_url}/embeddings`) */
  @ApiProperty({ example: 'https://api.openai.com/v1' })
  @IsUrl({ require_protocol: true, protocols: ['http', 'https'], require_tld: false })
  @MaxLength(2000)
  base_url: string;

  /** Model name, e.g. text-embedding-3-small */
  @ApiProperty({ example: 'text-embedding-3-small' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  model: string;

  /** Vector size to ask for (models that support it), 1..8192 */
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 8192, example: 512 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(8192)
  dimensions?: number;

  /** Texts per request, 1..2048 (default 64) */
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 2048, default: 64, example: 64 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(2048)
  batch_size?: number;

  /** The workspace secret holding the API key */
  @ApiPropertyOptional({ example: EXAMPLE_ID.secret })
  @ValidateIfPresent()
  @IsUUID()
  secret_id?: string;
}

export class EmbeddingConfigResponse {
  /** Null for the built-in local embedder */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.embeddingConfig })
  id: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.embeddingConfig })
  name: string;
  @ApiProperty({ example: 'OpenAI small embeddings for clustering and semantic metrics' })
  description: string;
  /** `local` (built in, no network) or a remote provider */
  @ApiProperty({ enum: ['local', ...REMOTE_EMBEDDING_PROVIDERS], example: 'openai_compatible' })
  provider: 'local' | RemoteEmbeddingProvider;
  /** True for the built-in local embedder */
  @ApiProperty({ example: false })
  builtin: boolean;
  @ApiProperty({ type: 'string', nullable: true, example: 'https://api.openai.com/v1' })
  base_url: string | null;
  @ApiProperty({ example: 'text-embedding-3-small' })
  model: string;
  @ApiProperty({ type: 'integer', nullable: true, example: 512 })
  dimensions: number | null;
  @ApiProperty({ example: 64 })
  batch_size: number;
  /** The secret holding the API key (never its value) */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.secret })
  secret_id: string | null;
  /** Whether this is the workspace's embedding config (PUT /workspaces/{id}/embedding-config) */
  @ApiProperty({ example: true })
  in_use: boolean;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.created })
  created_at: Date | null;
}
