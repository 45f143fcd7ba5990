import { MAX_INT32 } from './json-limits.js';

type Schema = { [keyword: string]: unknown };

/** A UUID's text: 8-4-4-4-12 hexadecimal digits. */
export const UUID_LENGTH = 36;

/**
 * States, in place, the bounds a schema already implies but does not say (docs/security.md,
 * "OWASP API Security ruleset"): a `format: uuid` string is 36 characters (what `@IsUUID` and
 * `UuidParam` enforce), and an integer's `format` follows its range, `int32` when its `minimum`
 * and `maximum` fit 32 bits, `int64` otherwise. Examples are values, not schemas.
 */
export function stateImpliedBounds(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) stateImpliedBounds(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as Schema;
  for (const [key, value] of Object.entries(schema))
    if (key !== 'example' && key !== 'examples') stateImpliedBounds(value);
  if (schema.type === 'string' && schema.format === 'uuid' && schema.maxLength === undefined)
    schema.maxLength = UUID_LENGTH;
  if (schema.type === 'integer' && schema.format === undefined) schema.format = integerFormat(schema);
}

function integerFormat(schema: Schema): 'int32' | 'int64' {
  const { minimum, maximum } = schema as { minimum?: number; maximum?: number };
  const fits = (n: number | undefined) => n !== undefined && Math.abs(n) <= MAX_INT32;
  return fits(minimum) && fits(maximum) ? 'int32' : 'int64';
}
