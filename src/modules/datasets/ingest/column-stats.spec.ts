import { describe, expect, it } from '@jest/globals';
import { ColumnStatsCollector, DISTINCT_CAP } from './column-stats.js';

describe('ColumnStatsCollector', () => {
  it('counts distinct values exactly as its set grows, telling strings from numbers and objects by value', () => {
    const stats = new ColumnStatsCollector();
    for (let i = 0; i < 50_000; i++)
      stats.add({ id: i, even: i % 2 === 0, text: `t${i % 1234}`, num: i % 7, obj: { b: i % 3, a: 1 } });
    stats.add({ id: '1', text: null, num: 1.0, obj: { a: 1, b: 0 } });
    const byName = Object.fromEntries(
      stats.finish(['id', 'even', 'text', 'num', 'obj'], 50_001).map((c) => [c.name, c]),
    );
    expect(byName.id).toEqual(
      expect.objectContaining({
        type: 'integer',
        distinct_count: 50_001,
        min: 0,
        max: 49_999,
        types: { integer: 50_000, string: 1 },
      }),
    );
    expect(byName.even).toEqual(expect.objectContaining({ type: 'boolean', distinct_count: 2, null_count: 1 }));
    expect(byName.text).toEqual(
      expect.objectContaining({ type: 'string', distinct_count: 1234, min_length: 2, max_length: 5, null_count: 1 }),
    );
    expect(byName.num).toEqual(expect.objectContaining({ distinct_count: 7 }));
    // Objects compare regardless of member order, as jsonb does.
    expect(byName.obj).toEqual(expect.objectContaining({ type: 'object', distinct_count: 3 }));
    expect(stats.uncounted()).toEqual([]);
  });

  it('gives up counting a column past the cap, leaving it to SQL', () => {
    const stats = new ColumnStatsCollector();
    for (let i = 0; i <= DISTINCT_CAP; i++) stats.add({ id: i, same: 'x' });
    expect(stats.uncounted()).toEqual(['id']);
    expect(stats.finish(['id', 'same'], DISTINCT_CAP + 1, { id: 42 }).map((c) => c.distinct_count)).toEqual([42, 1]);
  });

  it('measures text in code points, as PostgreSQL does', () => {
    const stats = new ColumnStatsCollector();
    stats.add({ s: 'é😀x' });
    expect(stats.finish(['s'], 1)[0]).toEqual(
      expect.objectContaining({ min_length: 3, max_length: 3, mean_length: 3 }),
    );
  });
});
