import { describe, expect, it } from '@jest/globals';
import { isUniqueViolation } from './database-errors.js';

describe('isUniqueViolation', () => {
  it('sees SQLSTATE 23505 wrapped by TypeORM and raised by the driver', () => {
    expect(isUniqueViolation({ driverError: { code: '23505' } })).toBe(true);
    expect(isUniqueViolation(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(true);
  });

  it('is false for other errors and for what is no error', () => {
    expect(isUniqueViolation({ driverError: { code: '23503' } })).toBe(false);
    expect(isUniqueViolation(new Error('boom'))).toBe(false);
    expect(isUniqueViolation(null)).toBe(false);
    expect(isUniqueViolation(undefined)).toBe(false);
  });
});
