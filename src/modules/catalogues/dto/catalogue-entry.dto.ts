import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, IsUUID, Matches, MaxLength } from 'class-validator';
import { EXAMPLE_ID } from '#libs/common/openapi-examples.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';

/** How an entry of one kind is shown in the document: who creates it, and an example name and description. */
export interface CatalogueEntryExample {
  /** The least workspace role that creates the entry, as the operation's access rule states it. */
  creator: 'member' | 'admin';
  name: string;
  description: string;
}

/**
 * What every new catalogue entry names: its workspace, a name unique there, a description. Each
 * kind extends the class made for its own examples, so that no kind shows another's.
 */
export function catalogueEntryRequest(example: CatalogueEntryExample) {
  class CreateCatalogueEntryRequest {
    @ApiProperty({
      description: `The workspace that will own the entry (the caller is ${example.creator} or above in it)`,
      example: EXAMPLE_ID.workspace,
    })
    @IsUUID()
    workspace_id: string;

    @ApiProperty({ description: 'Unique in the workspace, case-insensitively', example: example.name })
    @Trim()
    @IsString()
    @MaxLength(100)
    @Matches(/^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$/, {
      message: 'name must be 1..100 letters, digits, spaces or . _ : - and start with a letter or digit',
    })
    name: string;

    @ApiPropertyOptional({ example: example.description })
    @ValidateIfPresent()
    @IsString()
    @MaxLength(2000)
    description?: string;
  }
  return CreateCatalogueEntryRequest;
}
