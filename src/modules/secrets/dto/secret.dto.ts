import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { PageQueryDto } from '#libs/common/pagination.js';
import { EXAMPLE_AT, EXAMPLE_CREDENTIAL, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

export const SECRET_VALUE_MAX = 65_536;
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
const NAME_MESSAGE = 'name must be 1 to 100 letters, digits, _, . or -, starting with a letter or digit';
export const SECRET_SORTS = ['name', '-name', 'created_at', '-created_at'] as const;

export class ListSecretsQuery extends PageQueryDto {
  /** Case-insensitive substring of the name */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  q?: string;

  @ApiPropertyOptional({ enum: SECRET_SORTS, default: 'name' })
  @IsOptional()
  @IsIn(SECRET_SORTS)
  sort?: (typeof SECRET_SORTS)[number];
}

export class CreateSecretRequest {
  /** How other records refer to it in the UI, e.g. `OPENAI_API_KEY` */
  @ApiProperty({ example: EXAMPLE_NAME.secret })
  @IsString()
  @MaxLength(100)
  @Matches(NAME, { message: NAME_MESSAGE })
  name: string;

  /** The secret itself; stored encrypted, returned only by reveal */
  @ApiProperty({ example: EXAMPLE_CREDENTIAL.apiKey })
  @IsString()
  @MinLength(1)
  @MaxLength(SECRET_VALUE_MAX)
  value: string;

  @ApiPropertyOptional({ example: 'Key of the judge and SUT calls of support-bot-v2' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(1000)
  description?: string;
}

export class UpdateSecretRequest {
  @ApiPropertyOptional({ example: EXAMPLE_NAME.secret })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(100)
  @Matches(NAME, { message: NAME_MESSAGE })
  name?: string;

  /** A new value replaces the old one */
  @ApiPropertyOptional({ example: EXAMPLE_CREDENTIAL.apiKey })
  @ValidateIfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(SECRET_VALUE_MAX)
  value?: string;

  @ApiPropertyOptional({ example: 'Rotated key of the support-bot-v2 calls' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(1000)
  description?: string;
}

/** A secret's metadata. The value is never part of it. */
export class WorkspaceSecretResponse {
  @ApiProperty({ example: EXAMPLE_ID.secret })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.secret })
  name: string;
  @ApiProperty({ example: 'Key of the judge and SUT calls of support-bot-v2' })
  description: string;
  @ApiProperty({ example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_ID.user })
  updated_by: string | null;
  @ApiProperty({ example: null })
  last_revealed_at: Date | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
  @ApiProperty({ example: 1 })
  version: number;
}

export class WorkspaceSecretRevealResponse {
  @ApiProperty({ example: EXAMPLE_ID.secret })
  id: string;
  @ApiProperty({ example: EXAMPLE_NAME.secret })
  name: string;
  @ApiProperty({ example: EXAMPLE_CREDENTIAL.apiKey })
  value: string;
}
