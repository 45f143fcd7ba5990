import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../../../libs/common/pagination.js';

// Optional, but never null: an explicit null is refused (400) rather than read as absent or written over a column.
const present = (_: object, value: unknown) => value !== undefined;

export const SECRET_VALUE_MAX = 65_536;
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
const NAME_MESSAGE = 'name must be 1 to 100 letters, digits, _, . or -, starting with a letter or digit';
export const SECRET_SORTS = ['name', '-name', 'created_at', '-created_at'] as const;

export class ListSecretsQuery extends PageQueryDto {
  /** Case-insensitive substring of the name */
  @IsOptional() @IsString() @MaxLength(100)
  q?: string;

  @ApiPropertyOptional({ enum: SECRET_SORTS, default: 'name' })
  @IsOptional() @IsIn(SECRET_SORTS)
  sort?: (typeof SECRET_SORTS)[number];
}

export class CreateSecretRequest {
  /** How other records refer to it in the UI, e.g. `OPENAI_API_KEY` */
  @IsString() @Matches(NAME, { message: NAME_MESSAGE })
  name: string;

  /** The secret itself; stored encrypted, returned only by reveal */
  @IsString() @MinLength(1) @MaxLength(SECRET_VALUE_MAX)
  value: string;

  @ValidateIf(present) @IsString() @MaxLength(1000)
  description?: string;
}

export class UpdateSecretRequest {
  @ValidateIf(present) @IsString() @Matches(NAME, { message: NAME_MESSAGE })
  name?: string;

  /** A new value replaces the old one */
  @ValidateIf(present) @IsString() @MinLength(1) @MaxLength(SECRET_VALUE_MAX)
  value?: string;

  @ValidateIf(present) @IsString() @MaxLength(1000)
  description?: string;
}

/** A secret's metadata. The value is never part of it. */
export class WorkspaceSecretResponse {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  created_by: string | null;
  updated_by: string | null;
  last_revealed_at: Date | null;
  created_at: Date;
  updated_at: Date;
  version: number;
}

export class WorkspaceSecretRevealResponse {
  id: string;
  name: string;
  value: string;
}
