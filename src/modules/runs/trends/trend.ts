import type { TrendPoint, TrendSeries } from '../../projects/dto/insights.dto.js';

/** A run as a project's trend lists it (its documented state: `runStateOf`). */
export interface TrendRun {
  id: string;
  name: string;
  state: string;
  sut_id: string;
  dataset_id: string;
  created_at: Date;
}

/** Scores of one metric in one run, for one group value: sums so that runs pool exactly. */
export interface TrendCell {
  run_id: string;
  created_at: Date;
  metric: string;
  group: string | null;
  sum: number;
  count: number;
  min: number;
  max: number;
  passed: number;
  verdicts: number;
}

export type TrendInterval = 'run' | 'day' | 'week';

/** The start of the bucket a time falls in: the time itself (run), its UTC day, or its ISO week (Monday). */
export function bucketStart(at: Date, interval: TrendInterval): string {
  if (interval === 'run') return at.toISOString();
  const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  if (interval === 'week') day.setUTCDate(day.getUTCDate() - ((day.getUTCDay() + 6) % 7));
  return day.toISOString();
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * One series per (metric, group), points in time order. With `run` each run is a point; with
 * `day` or `week` the rows of every run in the bucket are pooled (a weighted mean, not a mean of means).
 */
export function buildSeries(cells: readonly TrendCell[], interval: TrendInterval): TrendSeries[] {
  const series = new Map<
    string,
    { metric: string; group: string | null; points: Map<string, TrendCell & { runs: string[]; at: string }> }
  >();
  const ordered = [...cells].sort(
    (a, b) => a.created_at.getTime() - b.created_at.getTime() || a.run_id.localeCompare(b.run_id),
  );
  for (const c of ordered) {
    const key = JSON.stringify([c.metric, c.group]);
    const s = series.get(key) ?? { metric: c.metric, group: c.group, points: new Map() };
    series.set(key, s);
    const at = bucketStart(c.created_at, interval);
    const bucket = interval === 'run' ? `${at}|${c.run_id}` : at;
    const p = s.points.get(bucket);
    if (!p) s.points.set(bucket, { ...c, runs: [c.run_id], at });
    else {
      p.sum += c.sum;
      p.count += c.count;
      p.min = Math.min(p.min, c.min);
      p.max = Math.max(p.max, c.max);
      p.passed += c.passed;
      p.verdicts += c.verdicts;
      if (!p.runs.includes(c.run_id)) p.runs.push(c.run_id);
    }
  }
  return [...series.values()]
    .sort(
      (a, b) =>
        a.metric.localeCompare(b.metric) ||
        (a.group ?? '').localeCompare(b.group ?? '') ||
        Number(a.group === null) - Number(b.group === null),
    )
    .map((s) => ({
      metric: s.metric,
      group: s.group,
      points: [...s.points.values()].map((p): TrendPoint => ({
        at: p.at,
        run_ids: p.runs,
        mean: round(p.sum / p.count),
        min: p.min,
        max: p.max,
        count: p.count,
        pass_rate: p.verdicts ? round(p.passed / p.verdicts) : null,
      })),
    }));
}
