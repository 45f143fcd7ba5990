/** Row-by-row comparison of two runs over the same dataset, and its CSV export. */
import { stringify } from 'csv-stringify/sync';
import type { DiffRow, DiffStatus, DiffSummary, ItemResult, MetricDelta, RunMetricSpec } from './run.types.js';
import { isScore, mean, rate, reportedScore } from './stats.js';

// Bound once: global lookups are slow inside jest's sandbox and this runs per row.
const { hasOwn } = Object;

export interface DiffOptions {
  /** Score moves no larger than this count as no move. */
  tolerance?: number;
}

export interface DiffResult {
  rows: DiffRow[];
  summary: DiffSummary;
}

/** One row of one run with its repetitions folded together. */
export interface FoldedRow {
  passed: boolean | null;
  output: string | null;
  scores: Map<string, { score: number | null; passed: boolean | null }>;
}

const STATUS_ORDER: Record<DiffStatus, number> = {
  regressed: 0,
  improved: 1,
  changed: 2,
  new: 3,
  missing: 4,
  unchanged: 5,
};

/** Majority of the non-null verdicts, ties failing; null when there are none. */
function majority(verdicts: ReadonlyArray<boolean | null | undefined>): boolean | null {
  let yes = 0;
  let no = 0;
  for (const v of verdicts) {
    if (v === true) yes++;
    else if (v === false) no++;
  }
  return yes + no === 0 ? null : yes > no;
}

/** What folding reads of an item: its row, repetition, verdict, scores and output (any stand-in for it that is equal exactly when the outputs are). */
export type FoldItem = Pick<ItemResult, 'row_id' | 'repetition' | 'output' | 'scores' | 'passed'>;

function foldRow(reps: FoldItem[], metrics: readonly RunMetricSpec[]): FoldedRow {
  reps.sort((a, b) => a.repetition - b.repetition);
  const scores = new Map<string, { score: number | null; passed: boolean | null }>();
  for (const metric of metrics) {
    const entries = reps.map((r) => (hasOwn(r.scores, metric.name) ? r.scores[metric.name] : undefined));
    // On the metric's one scale (0..1 for judged rubrics), so deltas compare across metrics.
    const values = entries.map(reportedScore).filter(isScore);
    scores.set(metric.name, { score: mean(values), passed: majority(entries.map((e) => e?.passed)) });
  }
  return { passed: majority(reps.map((r) => r.passed)), output: reps[0].output, scores };
}

/**
 * A run's answered items folded a row at a time as they are read (a row's repetitions adjacent, as
 * in the items' order): what a diff keeps of a run is a verdict, an output and a score per metric
 * per row, never the items.
 */
export class RunFold {
  private readonly rows = new Map<string, FoldedRow>();
  private reps: FoldItem[] = [];

  constructor(private readonly metrics: readonly RunMetricSpec[]) {}

  add(item: FoldItem): void {
    if (this.reps.length && this.reps[0].row_id !== item.row_id) this.flush();
    if (!this.reps.length && this.rows.has(item.row_id))
      throw new Error(`row ${item.row_id} came back after other rows: its repetitions must be adjacent`);
    this.reps.push(item);
  }

  /** The folded rows, in the order their first item came. */
  result(): Map<string, FoldedRow> {
    this.flush();
    return this.rows;
  }

  private flush(): void {
    if (!this.reps.length) return;
    this.rows.set(this.reps[0].row_id, foldRow(this.reps, this.metrics));
    this.reps = [];
  }
}

function fold(items: readonly FoldItem[], metrics: readonly RunMetricSpec[]): Map<string, FoldedRow> {
  const byRow = new Map<string, FoldItem[]>();
  for (const item of items) {
    const reps = byRow.get(item.row_id);
    if (reps) reps.push(item);
    else byRow.set(item.row_id, [item]);
  }
  const run = new RunFold(metrics);
  for (const reps of byRow.values()) for (const item of reps) run.add(item);
  return run.result();
}

function classify(
  base: FoldedRow,
  candidate: FoldedRow,
  metrics: readonly RunMetricSpec[],
  tolerance: number,
): DiffStatus {
  if (base.passed === true && candidate.passed === false) return 'regressed';
  if (base.passed === false && candidate.passed === true) return 'improved';
  let worse = false;
  let better = false;
  for (const metric of metrics) {
    if (!metric.gating) continue;
    const b = base.scores.get(metric.name)?.score;
    const c = candidate.scores.get(metric.name)?.score;
    if (!isScore(b) || !isScore(c)) continue;
    const gain = metric.better === 'higher' ? c - b : b - c;
    if (gain > tolerance) better = true;
    else if (gain < -tolerance) worse = true;
  }
  if (worse) return better ? 'changed' : 'regressed';
  return better ? 'improved' : 'unchanged';
}

function metricDelta(base: FoldedRow | undefined, candidate: FoldedRow | undefined, name: string): MetricDelta {
  const b = base?.scores.get(name);
  const c = candidate?.scores.get(name);
  const baseScore = b?.score ?? null;
  const candidateScore = c?.score ?? null;
  return {
    base: baseScore,
    candidate: candidateScore,
    delta: baseScore !== null && candidateScore !== null ? candidateScore - baseScore : null,
    base_passed: b?.passed ?? null,
    candidate_passed: c?.passed ?? null,
  };
}

/** Mean score and verdict pass rate of one metric over every folded row of a run. */
function sideStats(rows: Map<string, FoldedRow>, name: string): { mean: number | null; passRate: number | null } {
  const values: number[] = [];
  let passed = 0;
  let failed = 0;
  for (const row of rows.values()) {
    const entry = row.scores.get(name);
    if (isScore(entry?.score)) values.push(entry.score);
    if (entry?.passed === true) passed++;
    else if (entry?.passed === false) failed++;
  }
  return { mean: mean(values), passRate: rate(passed, failed) };
}

export function diffRows(
  base: readonly FoldItem[],
  candidate: readonly FoldItem[],
  metrics: RunMetricSpec[],
  opts?: DiffOptions,
): DiffResult {
  return diffFolded(fold(base, metrics), fold(candidate, metrics), metrics, opts);
}

/** The diff of two runs already folded (RunFold), rows in the order of the base's then the candidate's new ones. */
export function diffFolded(
  baseRows: Map<string, FoldedRow>,
  candidateRows: Map<string, FoldedRow>,
  metrics: RunMetricSpec[],
  opts?: DiffOptions,
): DiffResult {
  const tolerance = opts?.tolerance ?? 1e-9;
  const rowIds = new Set([...baseRows.keys(), ...candidateRows.keys()]);

  const rows: DiffRow[] = [];
  for (const rowId of rowIds) {
    const b = baseRows.get(rowId);
    const c = candidateRows.get(rowId);
    const status: DiffStatus =
      b === undefined ? 'new' : c === undefined ? 'missing' : classify(b, c, metrics, tolerance);
    const deltas: Record<string, MetricDelta> = {};
    for (const metric of metrics) deltas[metric.name] = metricDelta(b, c, metric.name);
    rows.push({
      row_id: rowId,
      status,
      base_passed: b?.passed ?? null,
      candidate_passed: c?.passed ?? null,
      metrics: deltas,
      output_changed: (b?.output ?? null) !== (c?.output ?? null),
    });
  }
  rows.sort(
    (x, y) =>
      STATUS_ORDER[x.status] - STATUS_ORDER[y.status] || (x.row_id < y.row_id ? -1 : x.row_id > y.row_id ? 1 : 0),
  );

  const summary: DiffSummary = {
    rows: rows.length,
    regressed: 0,
    improved: 0,
    unchanged: 0,
    changed: 0,
    new: 0,
    missing: 0,
    metrics: [],
  };
  for (const row of rows) summary[row.status]++;
  for (const metric of metrics) {
    const baseStats = sideStats(baseRows, metric.name);
    const candidateStats = sideStats(candidateRows, metric.name);
    let regressions = 0;
    let improvements = 0;
    for (const row of rows) {
      const d = row.metrics[metric.name];
      if (d.base_passed === true && d.candidate_passed === false) regressions++;
      else if (d.base_passed === false && d.candidate_passed === true) improvements++;
    }
    summary.metrics.push({
      name: metric.name,
      base_mean: baseStats.mean,
      candidate_mean: candidateStats.mean,
      delta: baseStats.mean !== null && candidateStats.mean !== null ? candidateStats.mean - baseStats.mean : null,
      base_pass_rate: baseStats.passRate,
      candidate_pass_rate: candidateStats.passRate,
      regressions,
      improvements,
    });
  }
  return { rows, summary };
}

/** Diff rows written to a CSV a chunk at a time. */
const CSV_CHUNK = 1000;

/** RFC 4180 CSV (CRLF records) of diff rows: one base/candidate/delta column triple per metric. */
export function diffToCsv(rows: DiffRow[], metricNames: string[]): string {
  return [...diffCsvChunks(rows, metricNames)].join('');
}

/** The same CSV in pieces (the header, then a thousand rows at a time), for a response that streams it. */
export function* diffCsvChunks(rows: readonly DiffRow[], metricNames: string[]): Generator<string> {
  const header = ['row_id', 'status', 'base_passed', 'candidate_passed', 'output_changed'];
  for (const name of metricNames) header.push(`${name}_base`, `${name}_candidate`, `${name}_delta`);
  yield csvRecords([header]);
  for (let start = 0; start < rows.length; start += CSV_CHUNK) {
    const records: Array<Array<string | number | boolean | null>> = [];
    for (const row of rows.slice(start, start + CSV_CHUNK)) {
      const record: Array<string | number | boolean | null> = [
        row.row_id,
        row.status,
        row.base_passed,
        row.candidate_passed,
        row.output_changed,
      ];
      for (const name of metricNames) {
        const d = hasOwn(row.metrics, name) ? row.metrics[name] : undefined;
        record.push(d?.base ?? null, d?.candidate ?? null, d?.delta ?? null);
      }
      records.push(record);
    }
    yield csvRecords(records);
  }
}

function csvRecords(records: Array<Array<string | number | boolean | null>>): string {
  return stringify(records, {
    record_delimiter: '\r\n',
    // With an explicit record delimiter the library stops quoting lone CR / LF unless told to.
    quote_record_delimiter: true,
    cast: { boolean: (value) => (value ? 'true' : 'false') },
  });
}
