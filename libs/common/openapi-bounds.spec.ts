import { describe, expect, it } from '@jest/globals';
import { stateImpliedBounds } from './openapi-bounds.js';

describe('stateImpliedBounds', () => {
  it('gives a uuid its 36 characters and an integer the format its range fits, leaving examples alone', () => {
    const document = {
      id: { type: 'string', format: 'uuid' },
      ids: { type: 'array', items: { type: 'string', format: 'uuid', maxLength: 36 } },
      page: { type: 'integer', minimum: 1, maximum: 200 },
      seq: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
      count: { type: 'integer' },
      given: { type: 'integer', format: 'int64', minimum: 1, maximum: 10 },
      example: { type: 'integer' },
    };
    stateImpliedBounds(document);
    expect(document).toEqual({
      id: { type: 'string', format: 'uuid', maxLength: 36 },
      ids: { type: 'array', items: { type: 'string', format: 'uuid', maxLength: 36 } },
      page: { type: 'integer', minimum: 1, maximum: 200, format: 'int32' },
      seq: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, format: 'int64' },
      count: { type: 'integer', format: 'int64' },
      given: { type: 'integer', format: 'int64', minimum: 1, maximum: 10 },
      example: { type: 'integer' },
    });
  });
});
