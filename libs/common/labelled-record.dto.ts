import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { EXAMPLE_NAME } from './openapi-examples.js';
import { Trim, ValidateIfPresent } from './dto-decorators.js';

/** A tag: 1..64 letters, digits or . _ : / - starting with a letter or digit. */
export const TAG_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;

// Optional, but never null: an explicit null is refused (400) rather than written over a required column.

/** What callers may change on a named, described and tagged record (datasets, SUTs). */
export class UpdateLabelledRecordRequest {
  @ApiPropertyOptional({ example: EXAMPLE_NAME.dataset })
  @ValidateIfPresent()
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;

  /** Send `""` to clear it */
  @ApiPropertyOptional({ example: 'Questions customers asked in April, with answers reviewed by the support team' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  /** Replaces the tags (up to 20) */
  @ApiPropertyOptional({ example: ['golden', 'faq'] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(20)
  @MaxLength(64, { each: true })
  @Matches(TAG_PATTERN, { each: true })
  tags?: string[];
}
