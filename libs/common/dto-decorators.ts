import { Transform } from 'class-transformer';
import { ValidateIf } from 'class-validator';

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
