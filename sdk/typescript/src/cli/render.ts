import type { RunDiffResponse, RunEventResponse, RunResponse } from '../generated/api.js';

/** A text table: a header row, a rule, the rows; columns padded to their widest cell. */
export function table(head: string[], rows: Array<Array<string | number | null | undefined>>): string {
  const cells = [
    head,
    ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined ? '-' : String(cell)))),
  ];
  const widths = head.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

const num = (value: unknown, digits = 3): string | null =>
  typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : null;
const pct = (value: unknown): string | null =>
  typeof value === 'number' && Number.isFinite(value) ? `${(value * 100).toFixed(1)}%` : null;
const signed = (value: unknown): string | null =>
  typeof value === 'number' && Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${value.toFixed(3)}` : null;

interface MetricSummary {
  name: string;
  mean?: number | null;
  pass_rate?: number | null;
  min_pass_rate?: number | null;
  meets_min_pass_rate?: boolean | null;
}

/** The run's summary: per metric mean and pass rate, the row pass rate, the verdict and its reasons. */
export function runSummary(run: RunResponse): string {
  const summary = (run.summary ?? {}) as { metrics?: MetricSummary[]; pass_rate?: number | null; reasons?: string[] };
  const minimum = new Map(run.metrics.map((m) => [m.name, m.min_pass_rate]));
  const rows = (summary.metrics ?? []).map((m) => [
    m.name,
    num(m.mean),
    pct(m.pass_rate),
    pct(m.min_pass_rate ?? minimum.get(m.name)),
    m.meets_min_pass_rate === false ? 'no' : m.meets_min_pass_rate ? 'yes' : '-',
  ]);
  const progress = run.progress;
  const lines = [
    `Run ${run.id} (${run.name}): ${run.state}${run.state_reason ? ` (${run.state_reason})` : ''}`,
    `Items: ${progress.total} (${progress.completed} answered, ${progress.errored} errored)`,
    '',
    table(['metric', 'mean', 'pass rate', 'min pass rate', 'meets'], rows),
    '',
    `Row pass rate: ${pct(summary.pass_rate) ?? '-'}   Verdict: ${run.passed === true ? 'PASSED' : run.passed === false ? 'FAILED' : '-'}`,
    ...(summary.reasons ?? []).map((reason) => `  - ${reason}`),
  ];
  return lines.join('\n');
}

/** A diff's counts and per metric means, deltas, regressions and improvements. */
export function diffSummary(diff: RunDiffResponse): string {
  const s = diff.summary;
  const rows = s.metrics.map((m) => [
    m.name,
    num(m.base_mean),
    num(m.candidate_mean),
    signed(m.delta),
    pct(m.base_pass_rate),
    pct(m.candidate_pass_rate),
    m.regressions,
    m.improvements,
  ]);
  return [
    `Candidate ${diff.candidate_run_id} against base ${diff.base_run_id}: ${s.rows} rows`,
    `  regressed ${s.regressed}, improved ${s.improved}, changed ${s.changed}, unchanged ${s.unchanged}, new ${s.new}, missing ${s.missing}`,
    '',
    table(['metric', 'base', 'candidate', 'delta', 'base pass', 'cand. pass', 'regressed', 'improved'], rows),
  ].join('\n');
}

/**
 * Progress of a run from its events, on stderr: a bar redrawn in place on a terminal, else a
 * line per state change and per tenth of the items (CI logs are not terminals).
 */
export class ProgressBar {
  private lastTenth = -1;
  private drawn = false;

  constructor(private readonly out: NodeJS.WriteStream = process.stderr) {}

  update(event: RunEventResponse): void {
    const data = event.data as Record<string, unknown>;
    if (event.type === 'state_changed')
      this.line(`state: ${String(data.to)}${data.reason ? ` (${String(data.reason)})` : ''}`);
    else if (event.type === 'row_error')
      this.line(`row error: ${String(data.code ?? '')} ${String(data.message ?? '')}`.trim());
    else if (event.type === 'progress')
      this.progress(
        Number(data.done),
        Number(data.total),
        data.rate_per_s as number | null,
        data.eta_s as number | null,
      );
  }

  finish(): void {
    if (this.drawn) this.out.write('\n');
    this.drawn = false;
  }

  private progress(done: number, total: number, rate: number | null, eta: number | null): void {
    const share = total > 0 ? Math.min(1, done / total) : 0;
    const text = `${done}/${total} ${(share * 100).toFixed(0)}%${rate ? ` ${rate.toFixed(1)}/s` : ''}${eta !== null && eta !== undefined && done < total ? ` ETA ${duration(eta)}` : ''}`;
    if (this.out.isTTY) {
      const width = 30;
      const filled = Math.round(share * width);
      this.out.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${text}\u001b[K`);
      this.drawn = true;
      return;
    }
    const tenth = Math.floor(share * 10);
    if (tenth === this.lastTenth) return;
    this.lastTenth = tenth;
    this.out.write(`progress: ${text}\n`);
  }

  private line(text: string): void {
    this.finish();
    this.out.write(`${text}\n`);
  }
}

function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}
