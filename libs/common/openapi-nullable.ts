/**
 * OpenAPI 3.0.3's reading of `nullable`: it adds null to the `type` beside it and to nothing else.
 * `{nullable: true, type: 'object', allOf: [{$ref}]}` (what `@ApiProperty({ type: X, nullable: true })`
 * gives) therefore admits no null, since the referenced schema refuses it, and
 * `{nullable: true, oneOf: [...]}` without a type neither. Both become an alternative of their
 * schema and a null, the form validators, Swagger UI and the SDK generators read alike
 * (docs/api-conventions.md, "Null"):
 *
 *   {description, anyOf: [{$ref: '#/components/schemas/X'}, {type: 'object', nullable: true, enum: [null]}]}
 */
type Schema = { [keyword: string]: unknown };

/** The schema that admits null and nothing else, in OpenAPI 3.0.3's terms. */
export const NULL_SCHEMA: Readonly<Schema> = Object.freeze({ type: 'object', nullable: true, enum: [null] });

/** Whether a member's schema admits null: `nullable` on its own type, or a null among its alternatives. */
export function admitsNull(schema: { nullable?: unknown; anyOf?: unknown; oneOf?: unknown } | undefined): boolean {
  if (!schema) return false;
  if (schema.nullable === true) return true;
  const alternatives = [schema.anyOf, schema.oneOf].flatMap((list) => (Array.isArray(list) ? list : []));
  return alternatives.some((alternative) => (alternative as { nullable?: unknown }).nullable === true);
}

/** What describes a value rather than constrains it: kept on the outer schema. */
const ANNOTATIONS = ['title', 'description', 'example', 'default', 'readOnly', 'writeOnly', 'deprecated'];

/** Rewrites, in place, every nullable reference and nullable alternative under `node` (a whole document). */
export function admitNullReferences(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) admitNullReferences(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as Schema;
  // Examples are values, not schemas.
  for (const [key, value] of Object.entries(schema))
    if (key !== 'example' && key !== 'examples') admitNullReferences(value);
  if (schema.nullable !== true) return;
  const found = nullableAlternatives(schema);
  if (!found) return;
  const kept = Object.fromEntries(ANNOTATIONS.filter((key) => key in schema).map((key) => [key, schema[key]]));
  for (const key of Object.keys(schema)) delete schema[key];
  Object.assign(schema, kept, { [found.keyword]: [...found.alternatives, { ...NULL_SCHEMA, enum: [null] }] });
}

/**
 * The alternatives a nullable schema stands for when its `nullable` reaches no type of its own:
 * the one schema of `allOf` or `$ref`, or the list of `oneOf`/`anyOf` without a `type`.
 */
function nullableAlternatives(schema: Schema): { keyword: 'anyOf' | 'oneOf'; alternatives: Schema[] } | undefined {
  const structural = Object.keys(schema).filter((key) => !ANNOTATIONS.includes(key) && key !== 'nullable');
  const only = (...keys: string[]) => structural.every((key) => keys.includes(key));
  if (typeof schema.$ref === 'string' && only('$ref'))
    return { keyword: 'anyOf', alternatives: [{ $ref: schema.$ref }] };
  const allOf = schema.allOf as Schema[] | undefined;
  if (allOf?.length === 1 && only('allOf', 'type') && (schema.type ?? 'object') === 'object')
    return { keyword: 'anyOf', alternatives: allOf };
  for (const keyword of ['oneOf', 'anyOf'] as const) {
    const list = schema[keyword] as Schema[] | undefined;
    if (list && !('type' in schema) && only(keyword)) return { keyword, alternatives: list };
  }
  return undefined;
}
