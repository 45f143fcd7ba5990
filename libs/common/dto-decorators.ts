import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, ValidateBy, ValidateIf } from 'class-validator';

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

/** Sort keys a query takes, and the length of a key's field (the query language's limits, docs/query-language.md). */
export const SORT_KEYS_MAX = 5;
export const FIELD_PATH_MAX = 1000;

/**
 * A query's sort keys over the query language's fields, `[{field, direction}]`, first wins
 * (docs/query-language.md): optional, an array of at most `SORT_KEYS_MAX` keys whose fields are at
 * most `FIELD_PATH_MAX` characters, documented with the example given.
 */
export function SortKeys(example: Array<{ field: string; direction: 'asc' | 'desc' }>): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'array',
      maxItems: SORT_KEYS_MAX,
      items: {
        type: 'object',
        properties: {
          field: { type: 'string', maxLength: FIELD_PATH_MAX },
          direction: { type: 'string', enum: ['asc', 'desc'] },
        },
        required: ['field'],
      },
      example,
    }),
    ValidateIfPresent(),
    IsArray(),
    ArrayMaxSize(SORT_KEYS_MAX),
    ValidateBy({
      name: 'sortFieldLength',
      validator: {
        // Not a list is @IsArray's to say; this one reads a list's fields only.
        validate: (keys: unknown) =>
          !Array.isArray(keys) ||
          keys.every(
            (key) =>
              typeof (key as { field?: unknown })?.field !== 'string' ||
              (key as { field: string }).field.length <= FIELD_PATH_MAX,
          ),
        defaultMessage: (args) => `each field of ${args?.property} must be at most ${FIELD_PATH_MAX} characters`,
      },
    }),
  );
}
