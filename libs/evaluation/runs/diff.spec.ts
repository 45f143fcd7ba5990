import { describe, expect, it } from '@jest/globals';
import { diffRows, diffToCsv } from './diff.js';
import { answeredItem } from '../../../test/factories/item-result.js';
import type { DiffRow, ItemResult, MetricScore, RunMetricSpec } from './run.types.js';

const s = (score: number | null, passed: boolean | null = null): MetricScore => ({ score, passed });

function item(
  row_id: string,
  scores: Record<string, MetricScore>,
  passed: boolean | null,
  fields: Partial<ItemResult> = {},
): ItemResult {
  return answeredItem(row_id, { output: 'same', scores, passed, ...fields });
}

const metrics: RunMetricSpec[] = [
  { name: 'acc', better: 'higher', gating: true, min_pass_rate: null },
  { name: 'lat', better: 'lower', gating: true, min_pass_rate: null },
  { name: 'bleu', better: 'higher', gating: false, min_pass_rate: null },
];

describe('diffRows classification', () => {
  const base = [
    item('reg', { acc: s(0.5) }, true),
    item('imp', { acc: s(0.5) }, false),
    item('tiny', { acc: s(0.5) }, true),
    item('lat-up', { lat: s(100) }, null),
    item('lat-down', { lat: s(150) }, null),
    item('mixed', { acc: s(0.5), lat: s(100) }, null),
    item('nongating', { acc: s(0.5), bleu: s(0.1) }, null),
    item('gone', { acc: s(0.5) }, true),
  ];
  const candidate = [
    // The verdict flip wins over a better score.
    item('reg', { acc: s(0.9) }, false),
    item('imp', { acc: s(0.1) }, true),
    item('tiny', { acc: s(0.5 + 1e-12) }, true),
    item('lat-up', { lat: s(150) }, null),
    item('lat-down', { lat: s(100) }, null),
    item('mixed', { acc: s(0.7), lat: s(120) }, null),
    item('nongating', { acc: s(0.5), bleu: s(0.9) }, null, { output: 'different' }),
    item('fresh', { acc: s(0.5) }, true),
  ];
  const { rows, summary } = diffRows(base, candidate, metrics);
  const status = (id: string) => rows.find((r) => r.row_id === id)?.status;

  it('gives each row its status', () => {
    expect(status('reg')).toBe('regressed');
    expect(status('imp')).toBe('improved');
    expect(status('tiny')).toBe('unchanged');
    expect(status('mixed')).toBe('changed');
    expect(status('nongating')).toBe('unchanged');
    expect(status('fresh')).toBe('new');
    expect(status('gone')).toBe('missing');
  });

  it("treats a rise of a 'lower' metric as worse", () => {
    expect(status('lat-up')).toBe('regressed');
    expect(status('lat-down')).toBe('improved');
  });

  it('orders by status, then row id', () => {
    expect(rows.map((r) => r.row_id)).toEqual([
      'lat-up',
      'reg',
      'imp',
      'lat-down',
      'mixed',
      'fresh',
      'gone',
      'nongating',
      'tiny',
    ]);
  });

  it('counts statuses in the summary', () => {
    expect(summary).toMatchObject({ rows: 9, regressed: 2, improved: 2, changed: 1, new: 1, missing: 1, unchanged: 2 });
  });

  it('reports per-metric deltas and output changes', () => {
    const mixed = rows.find((r) => r.row_id === 'mixed') as DiffRow;
    expect(mixed.metrics.lat).toEqual({
      base: 100,
      candidate: 120,
      delta: 20,
      base_passed: null,
      candidate_passed: null,
    });
    expect(mixed.output_changed).toBe(false);
    expect(rows.find((r) => r.row_id === 'nongating')?.output_changed).toBe(true);
    const fresh = rows.find((r) => r.row_id === 'fresh') as DiffRow;
    expect(fresh).toMatchObject({ base_passed: null, candidate_passed: true });
    expect(fresh.metrics.acc).toEqual({
      base: null,
      candidate: 0.5,
      delta: null,
      base_passed: null,
      candidate_passed: null,
    });
  });

  it('honours a wider tolerance', () => {
    const b = [item('a', { acc: s(0.5) }, null), item('b', { acc: s(0.5) }, null)];
    const c = [item('a', { acc: s(0.505) }, null), item('b', { acc: s(0.52) }, null)];
    const diff = diffRows(b, c, metrics, { tolerance: 0.01 }).rows;
    expect(diff.map((r) => [r.row_id, r.status])).toEqual([
      ['b', 'improved'],
      ['a', 'unchanged'],
    ]);
  });

  it('counts a null output against a string as changed', () => {
    const diff = diffRows([item('a', {}, null, { output: null })], [item('a', {}, null, { output: '' })], metrics).rows;
    expect(diff[0].output_changed).toBe(true);
  });
});

describe('diffRows repetitions', () => {
  // Base: acc 0.2 and 0.4 average to 0.3; verdicts one each way tie, so the row fails.
  const base = [
    item('r', { acc: s(0.4, false) }, false, { repetition: 1, output: 'second' }),
    item('r', { acc: s(0.2, true) }, true, { repetition: 0, output: 'first' }),
  ];
  // Candidate: 0.6, 0.8, 1.0 average to 0.8; two of three pass.
  const candidate = [
    item('r', { acc: s(0.6, true) }, true, { repetition: 0, output: 'first' }),
    item('r', { acc: s(0.8, false) }, false, { repetition: 1, output: 'other' }),
    item('r', { acc: s(1.0, true) }, true, { repetition: 2, output: 'other' }),
  ];

  it('averages scores, takes the majority verdict (ties fail) and the first repetition output', () => {
    const { rows, summary } = diffRows(base, candidate, metrics);
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row).toMatchObject({
      row_id: 'r',
      status: 'improved',
      base_passed: false,
      candidate_passed: true,
      output_changed: false,
    });
    expect(row.metrics.acc.base).toBeCloseTo(0.3, 12);
    expect(row.metrics.acc.candidate).toBeCloseTo(0.8, 12);
    expect(row.metrics.acc.delta).toBeCloseTo(0.5, 12);
    expect(row.metrics.acc.base_passed).toBe(false);
    expect(row.metrics.acc.candidate_passed).toBe(true);
    expect(summary.rows).toBe(1);
    expect(summary.metrics[0]).toMatchObject({
      base_pass_rate: 0,
      candidate_pass_rate: 1,
      regressions: 0,
      improvements: 1,
    });
  });
});

describe('diffRows summary metrics', () => {
  it('means and pass rates over all rows of each side; verdict flips per metric', () => {
    const base = [item('a', { acc: s(0.4, true) }, true), item('b', { acc: s(0.6, false) }, false)];
    const candidate = [item('a', { acc: s(0.2, false) }, false), item('c', { acc: s(1, true) }, true)];
    const { rows, summary } = diffRows(base, candidate, metrics.slice(0, 1));
    expect(rows.map((r) => [r.row_id, r.status])).toEqual([
      ['a', 'regressed'],
      ['c', 'new'],
      ['b', 'missing'],
    ]);
    const [acc] = summary.metrics;
    expect(acc).toMatchObject({
      name: 'acc',
      base_mean: 0.5,
      candidate_mean: 0.6,
      base_pass_rate: 0.5,
      candidate_pass_rate: 0.5,
      regressions: 1,
      improvements: 0,
    });
    expect(acc.delta).toBeCloseTo(0.1, 12);
    expect(summary).toMatchObject({ rows: 3, regressed: 1, new: 1, missing: 1, improved: 0, changed: 0, unchanged: 0 });
  });

  it('has null means for a metric nobody scored', () => {
    const { summary } = diffRows([item('a', {}, null)], [item('a', {}, null)], metrics.slice(2));
    expect(summary.metrics[0]).toMatchObject({
      base_mean: null,
      candidate_mean: null,
      delta: null,
      base_pass_rate: null,
      candidate_pass_rate: null,
    });
  });
});

describe('diffToCsv', () => {
  it('writes the header, booleans, empty nulls and RFC 4180 quoting', () => {
    const rows: DiffRow[] = [
      {
        row_id: 'a,"b"',
        status: 'regressed',
        base_passed: true,
        candidate_passed: false,
        output_changed: true,
        metrics: { acc: { base: 0.5, candidate: 0.25, delta: -0.25, base_passed: true, candidate_passed: false } },
      },
      {
        row_id: 'line\nbreak',
        status: 'new',
        base_passed: null,
        candidate_passed: true,
        output_changed: false,
        metrics: {},
      },
    ];
    expect(diffToCsv(rows, ['acc'])).toBe(
      'row_id,status,base_passed,candidate_passed,output_changed,acc_base,acc_candidate,acc_delta\r\n' +
        '"a,""b""",regressed,true,false,true,0.5,0.25,-0.25\r\n' +
        '"line\nbreak",new,,true,false,,,\r\n',
    );
  });

  it('writes only the header when there are no rows', () => {
    expect(diffToCsv([], [])).toBe('row_id,status,base_passed,candidate_passed,output_changed\r\n');
  });
});

describe('diffRows on one scale', () => {
  it('compares a judged rubric by its 0..1 normalisation, so its delta reads like any other metric', () => {
    const rubric: RunMetricSpec[] = [{ name: 'correctness', better: 'higher', gating: true, min_pass_rate: null }];
    const judged = (score: number): MetricScore => ({ score, passed: null, normalized: (score - 1) / 4 });
    const diff = diffRows(
      [item('r', { correctness: judged(2) }, null)],
      [item('r', { correctness: judged(5) }, null)],
      rubric,
    );
    expect(diff.rows[0].metrics.correctness).toMatchObject({ base: 0.25, candidate: 1, delta: 0.75 });
    expect(diff.summary.metrics[0]).toMatchObject({ base_mean: 0.25, candidate_mean: 1 });
  });
});
