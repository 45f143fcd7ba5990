import { describe, expect, it } from '@jest/globals';
import { bucketStart, buildSeries } from './trend.js';

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
