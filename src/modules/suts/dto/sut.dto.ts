import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsOptional, IsString, IsUUID, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { TAG_PATTERN, UpdateLabelledRecordRequest } from '../../../../libs/common/labelled-record.dto.js';
import { PageQueryDto } from '../../../../libs/common/pagination.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
const present = (_: object, value: unknown) => value !== undefined;

export class ListSutsQuery extends PageQueryDto {
  /** The workspace whose systems to list */
  @IsUUID()
  workspace_id: string;

  /** Only systems whose name contains this text (case-insensitive) */
  @IsOptional() @IsString() @MaxLength(200)
  q?: string;

  /** Only systems carrying this tag */
  @IsOptional() @IsString() @MaxLength(50)
  tag?: string;
}

export class CreateSutRequest {
  /** The workspace that will own the system (members) */
  @IsUUID()
  workspace_id: string;

  /** Unique in the workspace, case-insensitively (1..200 characters) */
  @Transform(trim) @IsString() @MinLength(1) @MaxLength(200)
  name: string;

  @ValidateIf(present) @IsString() @MaxLength(2000)
  description?: string;

  /** Up to 20 tags of 1..64 letters, digits or . _ : / - */
  @ValidateIf(present) @IsArray() @ArrayMaxSize(20) @Matches(TAG_PATTERN, { each: true })
  tags?: string[];
}

export class UpdateSutRequest extends UpdateLabelledRecordRequest {}

export class SutResponse {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  tags: string[];
  /** Connections the system has */
  connection_count: number;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}
