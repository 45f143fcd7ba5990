import { describe, expect, it } from '@jest/globals';
import { buildCoverage, parsePairs } from './coverage.js';
import { bucketStart, buildSeries } from './trend.js';

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

describe('trend series', () => {
  const cell = (run: string, at: string, sum: number, count: number, group: string | null = null) => ({
    run_id: run,
    created_at: new Date(at),
    metric: 'm',
    group,
    sum,
    count,
    min: 0,
    max: 1,
    passed: sum,
    verdicts: count,
  });

  it('puts each run in its own point, in time order', () => {
    const series = buildSeries(
      [cell('r2', '2026-01-02T10:00:00Z', 1, 4), cell('r1', '2026-01-01T10:00:00Z', 3, 4)],
      'run',
    );
    expect(series[0].points.map((p) => [p.run_ids, p.mean, p.pass_rate])).toEqual([
      [['r1'], 0.75, 0.75],
      [['r2'], 0.25, 0.25],
    ]);
  });

  it('pools runs of a day or week as a weighted mean', () => {
    const cells = [
      cell('r1', '2026-01-05T01:00:00Z', 3, 4),
      cell('r2', '2026-01-05T23:00:00Z', 0, 2),
      cell('r3', '2026-01-07T12:00:00Z', 2, 2),
    ];
    expect(buildSeries(cells, 'day')[0].points.map((p) => [p.at, p.mean, p.count])).toEqual([
      ['2026-01-05T00:00:00.000Z', 0.5, 6],
      ['2026-01-07T00:00:00.000Z', 1, 2],
    ]);
    expect(buildSeries(cells, 'week')[0].points.map((p) => [p.at, p.run_ids, p.mean])).toEqual([
      ['2026-01-05T00:00:00.000Z', ['r1', 'r2', 'r3'], 0.625],
    ]);
  });

  it('starts ISO weeks on Monday', () => {
    expect(bucketStart(new Date('2026-01-11T12:00:00Z'), 'week')).toBe('2026-01-05T00:00:00.000Z');
  });

  it('keeps one series per group', () => {
    const series = buildSeries(
      [cell('r1', '2026-01-01T00:00:00Z', 1, 1, 'a'), cell('r1', '2026-01-01T00:00:00Z', 0, 1, 'b')],
      'run',
    );
    expect(series.map((s) => [s.group, s.points[0].mean])).toEqual([
      ['a', 1],
      ['b', 0],
    ]);
  });
});
