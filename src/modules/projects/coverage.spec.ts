import { describe, expect, it } from '@jest/globals';
import { buildCoverage, parsePairs } from './coverage.js';

const dims = [
  {
    name: 'topic',
    description: '',
    values: [
      { value: 'a', description: '' },
      { value: 'b', description: '' },
    ],
  },
  {
    name: 'tone',
    description: '',
    values: [
      { value: 'x', description: '' },
      { value: 'y', description: '' },
    ],
  },
];

describe('buildCoverage', () => {
  it('counts listed values (zero when absent), other values, unassigned rows, pairs and gaps', () => {
    const report = buildCoverage(
      dims,
      [
        { dimension: 'topic', value: 'a', rows: 3 },
        { dimension: 'topic', value: 'zzz', rows: 1 },
        { dimension: 'tone', value: 'x', rows: 2 },
      ],
      5,
      2,
      [['topic', 'tone']],
      [{ dimensions: ['topic', 'tone'], values: ['a', 'x'], rows: 2 }],
    );
    expect(report.dimensions[0]).toEqual({
      name: 'topic',
      values: [
        { value: 'a', rows: 3, covered: true, share: 0.6 },
        { value: 'b', rows: 0, covered: false, share: 0 },
      ],
      covered_values: 1,
      total_values: 2,
      unassigned_rows: 1,
      other_values: [{ value: 'zzz', rows: 1, covered: false, share: 0.2 }],
    });
    expect(report.dimensions[1].unassigned_rows).toBe(3);
    expect(report.gaps).toEqual([
      { dimension: 'tone', value: 'y', rows: 0, missing: 2 },
      { dimension: 'topic', value: 'b', rows: 0, missing: 2 },
    ]);
    expect(report.pairs[0].cells.map((c) => c.rows)).toEqual([2, 0, 0, 0]);
    expect(report.pairs[0]).toEqual(expect.objectContaining({ covered_cells: 1, total_cells: 4 }));
    expect(report.coverage_ratio).toBe(0.5);
  });

  it('has no ratio without dimensions', () => {
    expect(buildCoverage([], [], 0, 1, [], []).coverage_ratio).toBeNull();
  });
});

describe('parsePairs', () => {
  it('parses, de-duplicates and names what is wrong', () => {
    const known = new Set(['topic', 'tone']);
    expect(parsePairs('topic:tone,topic:tone', known)).toEqual({ pairs: [['topic', 'tone']], errors: [] });
    expect(parsePairs('topic:topic,topic,topic:nope', known).errors).toHaveLength(3);
    expect(parsePairs(undefined, known)).toEqual({ pairs: [], errors: [] });
  });
});
