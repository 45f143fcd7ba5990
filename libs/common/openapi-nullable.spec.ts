import { describe, expect, it } from '@jest/globals';
import { admitNullReferences, NULL_SCHEMA } from './openapi-nullable.js';

const REF = { $ref: '#/components/schemas/RunSampleDto' };

describe('admitNullReferences', () => {
  it('rewrites a nullable reference (allOf of one $ref) into the reference or null, keeping its description', () => {
    const member = { nullable: true, description: 'The sample', type: 'object', allOf: [REF] };
    admitNullReferences(member);
    expect(member).toEqual({ description: 'The sample', anyOf: [REF, NULL_SCHEMA] });
  });

  it('rewrites a nullable bare $ref and a nullable oneOf without a type, keeping the oneOf', () => {
    const document = {
      components: {
        schemas: {
          A: {
            properties: {
              ref: { nullable: true, ...REF },
              value: { nullable: true, example: 1, oneOf: [{ type: 'number' }, { type: 'string' }] },
            },
          },
        },
      },
    };
    admitNullReferences(document);
    expect(document.components.schemas.A.properties).toEqual({
      ref: { anyOf: [REF, NULL_SCHEMA] },
      value: { example: 1, oneOf: [{ type: 'number' }, { type: 'string' }, NULL_SCHEMA] },
    });
  });

  it('leaves a nullable typed member, a schema with constraints beside allOf, and examples as they are', () => {
    const typed = { type: 'string', nullable: true };
    const constrained = { nullable: true, allOf: [REF], required: ['id'] };
    const example = { example: { nullable: true, allOf: [REF] } };
    admitNullReferences([typed, constrained, example]);
    expect(typed).toEqual({ type: 'string', nullable: true });
    expect(constrained).toEqual({ nullable: true, allOf: [REF], required: ['id'] });
    expect(example).toEqual({ example: { nullable: true, allOf: [REF] } });
  });

  it('gives each rewritten member a null schema of its own (no shared object in the document)', () => {
    const a: Record<string, unknown> = { nullable: true, allOf: [REF] };
    const b: Record<string, unknown> = { nullable: true, allOf: [REF] };
    admitNullReferences([a, b]);
    expect((a.anyOf as unknown[])[1]).toEqual(NULL_SCHEMA);
    expect((a.anyOf as unknown[])[1]).not.toBe((b.anyOf as unknown[])[1]);
  });
});
