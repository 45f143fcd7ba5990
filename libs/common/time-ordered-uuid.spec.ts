import { describe, expect, it } from '@jest/globals';
import { validate, version } from 'uuid';
import { timeOrderedUuid } from './time-ordered-uuid.js';

describe('timeOrderedUuid', () => {
  it('makes valid, distinct UUIDv7s that sort in the order they were made', () => {
    const before = Date.now();
    const ids = Array.from({ length: 100_000 }, () => timeOrderedUuid());
    const after = Date.now();
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (!validate(id) || version(id) !== 7 || !/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab]/.test(id))
        throw new Error(`not a UUIDv7: ${id}`);
      if (i > 0 && !(ids[i - 1] < id)) throw new Error(`out of order at ${i}: ${ids[i - 1]} then ${id}`);
    }
    expect(new Set(ids).size).toBe(ids.length);
    const msOf = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    // Many ids a millisecond: the counter, not the clock, kept most of them in order.
    expect(new Set(ids.map(msOf)).size).toBeLessThan(ids.length / 10);
    expect(msOf(ids[0])).toBeGreaterThanOrEqual(before);
    // A counter that ran out borrows the next millisecond, never more than a few.
    expect(msOf(ids[ids.length - 1])).toBeLessThanOrEqual(after + 1);
  });
});
