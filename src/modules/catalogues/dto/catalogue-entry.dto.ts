import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, IsUUID, Matches, MaxLength } from 'class-validator';
import { EXAMPLE_ID, EXAMPLE_NAME } from '../../../../libs/common/openapi-examples.js';
import { Trim, ValidateIfPresent } from '../../../../libs/common/dto-decorators.js';

/** What every new catalogue entry names: its workspace, a name unique there, a description. */
export class CreateCatalogueEntryRequest {
  /** The workspace that will own the entry (admins) */
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  /** Unique in the workspace, case-insensitively */
  @ApiProperty({ example: EXAMPLE_NAME.embeddingConfig })
  @Trim()
  @IsString()
  @Matches(/^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$/, {
    message: 'name must be 1..100 letters, digits, spaces or . _ : - and start with a letter or digit',
  })
  name: string;

  @ApiPropertyOptional({ example: 'OpenAI small embeddings for clustering and semantic metrics' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;
}
