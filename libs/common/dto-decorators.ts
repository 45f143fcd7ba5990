import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsArray, ValidateIf } from 'class-validator';

/**
 * Validates the property only when the request carries it: an absent (undefined) field skips its
 * rules, an explicit null does not (a field that may be cleared says so with a rule of its own).
 */
export function ValidateIfPresent(): PropertyDecorator {
  return ValidateIf((_: object, value: unknown) => value !== undefined);
}

/** Trims a string before it is validated; other values pass as they are. */
export function Trim(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value));
}

/**
 * A query's sort keys over the query language's fields, `[{field, direction}]`, first wins
 * (docs/query-language.md): optional, an array, documented with the example given.
 */
export function SortKeys(example: Array<{ field: string; direction: 'asc' | 'desc' }>): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'array',
      items: {
        type: 'object',
        properties: { field: { type: 'string' }, direction: { type: 'string', enum: ['asc', 'desc'] } },
        required: ['field'],
      },
      example,
    }),
    ValidateIfPresent(),
    IsArray(),
  );
}
