import { Type } from 'class-transformer';
import { registerDecorator, ValidateNested, type ValidationArguments, type ValidationOptions } from 'class-validator';

/** The OpenAPI schema of any JSON value (OpenAPI has no `any`: a oneOf of every JSON type). */
export const ANY_JSON = {
  oneOf: [
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'object', additionalProperties: true },
    { type: 'array', items: {} },
  ],
};
/**
 * The same, null included. OpenAPI 3.0 has no null type and `nullable` needs a `type` beside it
 * (Spectral refuses an example otherwise), so null is the object alternative's.
 */
export const ANY_JSON_OR_NULL = {
  oneOf: [
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'object', additionalProperties: true, nullable: true },
    { type: 'array', items: {} },
  ],
};

/** The longest name and value an `IsStringRecord` member holds. */
export const STRING_RECORD = { nameMax: 200, valueMax: 8000 } as const;

/** The OpenAPI schema of an `IsStringRecord(maxKeys)` member. */
export function stringRecordSchema(maxKeys: number) {
  return {
    type: 'object',
    maxProperties: maxKeys,
    additionalProperties: { type: 'string', maxLength: STRING_RECORD.valueMax },
  } as const;
}

/**
 * `ANY_JSON` (or `ANY_JSON_OR_NULL`) as `IsBoundedJson(maxBytes)` bounds it: no string longer than
 * that many bytes of JSON hold, no list of more elements (each takes a byte and a comma at least).
 */
export function boundedJsonSchema(schema: typeof ANY_JSON | typeof ANY_JSON_OR_NULL, maxBytes: number) {
  return {
    oneOf: schema.oneOf.map((alternative) =>
      alternative.type === 'string'
        ? { ...alternative, maxLength: maxBytes }
        : alternative.type === 'array'
          ? { ...alternative, maxItems: Math.floor(maxBytes / 2) }
          : alternative,
    ),
  };
}

/** A plain object whose values are all strings (headers, query parameters): at most `maxKeys` keys, names and values bounded. */
export function IsStringRecord(maxKeys = 50, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isStringRecord',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `$property must be an object of at most ${maxKeys} string values (names up to ${STRING_RECORD.nameMax}, values up to ${STRING_RECORD.valueMax} characters)`,
        ...options,
      },
      validator: {
        validate(value: unknown) {
          if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
          const entries = Object.entries(value);
          return (
            entries.length <= maxKeys &&
            entries.every(
              ([k, v]) =>
                k.length > 0 &&
                k.length <= STRING_RECORD.nameMax &&
                typeof v === 'string' &&
                v.length <= STRING_RECORD.valueMax,
            )
          );
        },
      },
    });
}

/** The bounds of an `IsStringListRecord` member: keys, values per key, characters per value (and per key). */
export interface StringListBounds {
  maxKeys: number;
  maxItems: number;
  maxLength: number;
}

/** The OpenAPI schema of an `IsStringListRecord(bounds)` member. */
export function stringListRecordSchema({ maxKeys, maxItems, maxLength }: StringListBounds) {
  return {
    type: 'object',
    maxProperties: maxKeys,
    additionalProperties: { type: 'array', maxItems, items: { type: 'string', maxLength } },
  } as const;
}

/** A plain object whose values are lists of strings (dimension -> values): every count and length bounded. */
export function IsStringListRecord(bounds: StringListBounds, options?: ValidationOptions): PropertyDecorator {
  const { maxKeys, maxItems, maxLength } = bounds;
  return (target, propertyName) =>
    registerDecorator({
      name: 'isStringListRecord',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `$property must be an object of at most ${maxKeys} lists of at most ${maxItems} strings (names and values up to ${maxLength} characters)`,
        ...options,
      },
      validator: {
        validate(value: unknown) {
          if (!isPlainObject(value)) return false;
          const entries = Object.entries(value as object);
          const text = (v: unknown) => typeof v === 'string' && v.length <= maxLength;
          return (
            entries.length <= maxKeys &&
            entries.every(([k, list]) => text(k) && Array.isArray(list) && list.length <= maxItems && list.every(text))
          );
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

const kindOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value);
const isPlainObject = (value: unknown): boolean => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * A nested request object validated as `type` (with `each`, a list of them). ValidateNested
 * alone walks an array found in an object's place element by element, so `[[{...}]]` or `[[]]`
 * would pass as a list of objects and reach the service as arrays (a TypeError, a 500); here
 * anything but a JSON object in an object's place is refused naming its path (`metrics.0`).
 */
export function NestedObject(type: () => new () => object, options: { each?: boolean } = {}): PropertyDecorator {
  return (target, propertyName) => {
    Type(type)(target, propertyName as string);
    ValidateNested({ each: options.each })(target, propertyName as string);
    registerDecorator({
      name: 'isNestedObject',
      target: target.constructor,
      propertyName: propertyName as string,
      // The nested class, for tools that walk request DTOs (test/architecture/request-dtos.spec.ts).
      constraints: [type],
      validator: {
        validate(value: unknown) {
          if (!options.each) return isPlainObject(value);
          // A list that is not an array is IsArray's to refuse.
          return !Array.isArray(value) || value.every(isPlainObject);
        },
        defaultMessage(args: ValidationArguments) {
          if (!options.each) return `${args.property} must be an object, found ${kindOf(args.value)}`;
          const list = args.value as unknown[];
          const index = list.findIndex((v) => !isPlainObject(v));
          return `${args.property}.${index} must be an object, found ${kindOf(list[index])}`;
        },
      },
    });
  };
}
