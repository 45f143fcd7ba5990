/** Where a run fails: failed rows by metric and by dimension value, and its most frequent errors. */
import type { ItemResult, RunMetricSpec } from './run.types.js';

/** Example row ids kept per metric and per error. */
const EXAMPLES = 5;

export interface FailureReport {
  rows: number;
  failed_rows: number;
  fail_rate: number | null;
  by_metric: Array<{
    metric: string;
    failed: number;
    errors: number;
    fail_rate: number | null;
    example_row_ids: string[];
  }>;
  by_dimension: Array<{ dimension: string; value: string; rows: number; failed: number; fail_rate: number }>;
  errors: Array<{ code: string; count: number; message: string; example_row_ids: string[] }>;
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

/** The failure report over answered items fed one at a time, in the run's order: counts and the first examples, never the items. */
export class FailureAnalysis {
  private rows = 0;
  private failed = 0;
  private readonly metrics: Array<{
    metric: string;
    failed: number;
    errors: number;
    judged: number;
    example_row_ids: string[];
  }>;
  private readonly groups = new Map<string, { dimension: string; value: string; rows: number; failed: number }>();
  private readonly errors = new Map<
    string,
    { code: string; count: number; message: string; example_row_ids: string[] }
  >();

  constructor(metrics: readonly RunMetricSpec[]) {
    this.metrics = metrics.map((m) => ({ metric: m.name, failed: 0, errors: 0, judged: 0, example_row_ids: [] }));
  }

  add(item: ItemResult): void {
    this.rows++;
    const failed = item.status === 'error' || item.passed === false;
    if (failed) this.failed++;
    for (const m of this.metrics) {
      const score = item.scores?.[m.metric];
      if (score === undefined) continue;
      if (score.passed === false) {
        m.failed++;
        if (m.example_row_ids.length < EXAMPLES) m.example_row_ids.push(item.row_id);
      }
      if (score.score === null) m.errors++;
      if (score.passed !== null) m.judged++;
    }
    for (const [dimension, value] of Object.entries(item.dimensions ?? {})) {
      const key = JSON.stringify([dimension, value]);
      const group = this.groups.get(key) ?? { dimension, value: value as string, rows: 0, failed: 0 };
      group.rows++;
      if (failed) group.failed++;
      this.groups.set(key, group);
    }
    if (item.error) {
      const e = this.errors.get(item.error.code) ?? {
        code: item.error.code,
        count: 0,
        message: item.error.message,
        example_row_ids: [],
      };
      e.count++;
      if (e.example_row_ids.length < EXAMPLES) e.example_row_ids.push(item.row_id);
      this.errors.set(item.error.code, e);
    }
  }

  result(): FailureReport {
    const byMetric = this.metrics.map(({ metric, failed, errors, judged, example_row_ids }) => ({
      metric,
      failed,
      errors,
      fail_rate: judged ? round(failed / judged) : null,
      example_row_ids,
    }));
    const byDimension = [...this.groups.values()].map((g) => ({ ...g, fail_rate: round(g.failed / g.rows) }));
    byDimension.sort(
      (a, b) =>
        b.fail_rate - a.fail_rate ||
        b.failed - a.failed ||
        a.dimension.localeCompare(b.dimension) ||
        a.value.localeCompare(b.value),
    );
    return {
      rows: this.rows,
      failed_rows: this.failed,
      fail_rate: this.rows ? round(this.failed / this.rows) : null,
      by_metric: byMetric.sort((a, b) => (b.fail_rate ?? -1) - (a.fail_rate ?? -1)),
      by_dimension: byDimension,
      errors: [...this.errors.values()].sort((a, b) => b.count - a.count),
    };
  }
}
