import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { SortKeys } from './dto-decorators.js';

class Sorted {
  @SortKeys([{ field: 'latency_ms', direction: 'desc' }])
  sort?: Array<Record<string, unknown>>;
}

describe('SortKeys', () => {
  const errors = (body: Record<string, unknown>) => validateSync(plainToInstance(Sorted, body));

  it('accepts an absent field and a list of keys', () => {
    expect(errors({})).toHaveLength(0);
    expect(errors({ sort: [{ field: 'topic' }, { field: 'latency_ms', direction: 'desc' }] })).toHaveLength(0);
  });

  it('refuses anything but a list, null included', () => {
    for (const sort of ['topic', { field: 'topic' }, null])
      expect(errors({ sort }).map((e) => e.property)).toEqual(['sort']);
  });

  it('refuses more than five keys, and a field past 1000 characters', () => {
    const keys = (n: number) => Array.from({ length: n }, (_, i) => ({ field: `c${i}` }));
    expect(errors({ sort: keys(5) })).toHaveLength(0);
    expect(errors({ sort: keys(6) }).map((e) => Object.keys(e.constraints ?? {}))).toEqual([['arrayMaxSize']]);
    expect(errors({ sort: [{ field: 'x'.repeat(1000) }, null] })).toHaveLength(0);
    expect(errors({ sort: [{ field: 'x'.repeat(1001) }] }).map((e) => Object.keys(e.constraints ?? {}))).toEqual([
      ['sortFieldLength'],
    ]);
  });
});
