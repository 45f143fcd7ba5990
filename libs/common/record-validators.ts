import { registerDecorator, type ValidationOptions } from 'class-validator';

/** A plain object whose values are all strings (headers, query parameters): at most `maxKeys` keys, names and values bounded. */
export function IsStringRecord(maxKeys = 50, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isStringRecord',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `$property must be an object of at most ${maxKeys} string values (names up to 200, values up to 8000 characters)`, ...options },
      validator: {
        validate(value: unknown) {
          if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
          const entries = Object.entries(value);
          return entries.length <= maxKeys && entries.every(([k, v]) => k.length > 0 && k.length <= 200 && typeof v === 'string' && v.length <= 8000);
        },
      },
    });
}

/** Any JSON value whose serialisation stays under `maxBytes` (templates, schemas, parameters). */
export function IsBoundedJson(maxBytes: number, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isBoundedJson',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `$property must be JSON of at most ${maxBytes} bytes`, ...options },
      validator: {
        validate(value: unknown) {
          return value !== undefined && Buffer.byteLength(JSON.stringify(value) ?? '') <= maxBytes;
        },
      },
    });
}
