import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A bucket of GET /traces/scores:aggregate as trace-scores-reference.py computes it. */
export interface ReferenceBucket {
  start: string;
  end: string;
  group: string | null;
  n: number;
  scored: number;
  errored: number;
  passed: number;
  failed: number;
  pass_rate: number | null;
  pass_rate_interval: { low: number; high: number } | null;
  mean: number | null;
  mean_interval: { low: number; high: number } | null;
  sd: number | null;
}

export interface TraceScoresReference {
  from: string;
  to: string;
  traces: Array<{ trace_id: string; start_time: string; service: string; model: string; tags: string[] }>;
  scores: Array<{
    trace_id: string;
    score: number | null;
    passed: boolean | null;
    label: string | null;
    error: string | null;
  }>;
  aggregates: Array<{
    bucket: 'none' | 'day' | 'hour';
    group_by: 'service' | 'model' | 'tag' | null;
    buckets: ReferenceBucket[];
  }>;
}

const folder = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname);
/** What trace-scores-reference.py printed, kept beside it. */
export const TRACE_SCORES_REFERENCE = JSON.parse(
  readFileSync(join(folder, 'trace-scores-reference.json'), 'utf8'),
) as TraceScoresReference;
