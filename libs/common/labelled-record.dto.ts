import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsString, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { EXAMPLE_NAME } from './openapi-examples.js';

/** A tag: 1..64 letters, digits or . _ : / - starting with a letter or digit. */
export const TAG_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
// Optional, but never null: an explicit null is refused (400) rather than written over a required column.
const present = (_: object, value: unknown) => value !== undefined;

/** What callers may change on a named, described and tagged record (datasets, SUTs). */
export class UpdateLabelledRecordRequest {
  @ApiPropertyOptional({ example: EXAMPLE_NAME.dataset })
  @ValidateIf(present) @Transform(trim) @IsString() @MinLength(1) @MaxLength(200)
  name?: string;

  /** Send `""` to clear it */
  @ApiPropertyOptional({ example: 'Questions customers asked in April, with answers reviewed by the support team' })
  @ValidateIf(present) @IsString() @MaxLength(2000)
  description?: string;

  /** Replaces the tags (up to 20) */
  @ApiPropertyOptional({ example: ['golden', 'faq'] })
  @ValidateIf(present) @IsArray() @ArrayMaxSize(20) @Matches(TAG_PATTERN, { each: true })
  tags?: string[];
}
