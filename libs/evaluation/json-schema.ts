import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** One validator for every schema metrics check (output JSON, tool-call arguments, metric parameters). */
export const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
const schemaCache = new Map<string, ValidateFunction>();

/** The compiled validator of a JSON Schema, compiled once per distinct schema; throws on an invalid schema. */
export function compiledSchema(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = schemaCache.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    schemaCache.set(key, validate);
  }
  return validate;
}

/** A validator's errors as short `path message` lines (at most 20). */
export function violations(validate: ValidateFunction): string[] {
  return (validate.errors ?? []).slice(0, 20).map((e) => `${e.instancePath || '/'} ${e.message}`);
}
