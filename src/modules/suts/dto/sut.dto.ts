import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsString, IsUUID, Matches, MaxLength, MinLength } from 'class-validator';
import { TAG_PATTERN, UpdateLabelledRecordRequest } from '#libs/common/labelled-record.dto.js';
import { PageQueryDto } from '#libs/common/pagination.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';

export class ListSutsQuery extends PageQueryDto {
  /** The workspace whose systems to list */
  @IsUUID()
  workspace_id: string;

  /** Only systems whose name contains this text (case-insensitive) */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  q?: string;

  /** Only systems carrying this tag */
  @IsOptional()
  @IsString()
  @MaxLength(50)
  tag?: string;
}

export class CreateSutRequest {
  /** The workspace that will own the system (members) */
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  @IsUUID()
  workspace_id: string;

  /** Unique in the workspace, case-insensitively (1..200 characters) */
  @ApiProperty({ example: EXAMPLE_NAME.sut })
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ example: 'Support assistant with retrieval over the help centre' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  /** Up to 20 tags of 1..64 letters, digits or . _ : / - */
  @ApiPropertyOptional({ example: ['production', 'rag'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(20)
  @MaxLength(64, { each: true })
  @Matches(TAG_PATTERN, { each: true })
  tags?: string[];
}

@ApiSchemaExample({
  name: EXAMPLE_NAME.sut,
  description: 'Support assistant with retrieval over the help centre and order lookups',
  tags: ['production', 'rag'],
})
export class UpdateSutRequest extends UpdateLabelledRecordRequest {}

export class SutResponse {
  @ApiProperty({ example: EXAMPLE_ID.sut })
  id: string;
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.sut })
  name: string;
  @ApiProperty({ example: 'Support assistant with retrieval over the help centre' })
  description: string;
  @ApiProperty({ example: ['production', 'rag'] })
  tags: string[];
  /** Connections the system has */
  @ApiProperty({ example: 2 })
  connection_count: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}
