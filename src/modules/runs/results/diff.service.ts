import { Injectable } from '@nestjs/common';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { valueAt } from '#libs/evaluation/row-context.js';
import { renderDiffRowPng } from '#libs/evaluation/runs/diff-image.js';
import { diffStatistics } from '#libs/evaluation/runs/diff-statistics.js';
import { diffCsvChunks, diffFolded, diffRows, RunFold, type DiffResult } from '#libs/evaluation/runs/diff.js';
import type { DiffRow, DiffStatistics, ItemResult, RunMetricSpec } from '#libs/evaluation/runs/run.types.js';
import { AppConfig } from '#libs/config/app-config.js';
import type { DiffQuery, RunDiffResponse, RunDiffRowResponse } from '../dto/diff.dto.js';
import type { RunEntity } from '../entities/run.entity.js';
import { itemResult } from '../execution/run-summaries.service.js';
import { RunErrors } from '../runs.errors.js';
import { itemPages } from '../execution/run-item-pages.js';
import { RunsRepository, type DiffItemRow, type RunItemRow } from '../runs.repository.js';
import { RunsService } from '../runs.service.js';
import { JudgeValidityService } from '../validity/judge-validity.service.js';

export interface Compared {
  base: RunEntity;
  candidate: RunEntity;
  metrics: RunMetricSpec[];
  diff: DiffResult;
  /** Each row's dimension values, the candidate's where it has the row. */
  dimensions: Map<string, Record<string, string | null>>;
}

/** A chunk of a file the response streams. */
export interface DiffFile {
  chunks: Iterable<string>;
  contentType: string;
  filename: string;
}

/** Two runs compared row by row (matched by row id): per metric deltas, regressions, improvements, new and missing rows. */
@Injectable()
export class DiffService {
  constructor(
    private readonly runsService: RunsService,
    private readonly runs: RunsRepository,
    private readonly config: AppConfig,
    private readonly validity: JudgeValidityService,
  ) {}

  async diff(access: WorkspaceAccess, query: DiffQuery): Promise<RunDiffResponse> {
    const c = await this.compare(access, query);
    const rows = query.status ? c.diff.rows.filter((r) => r.status === query.status) : c.diff.rows;
    const limit = query.limit ?? 100;
    const offset = query.offset ?? 0;
    return {
      base_run_id: c.base.id,
      candidate_run_id: c.candidate.id,
      metrics: c.metrics.map((m) => m.name),
      summary: await this.validity.diffSummary(c.base, c.candidate, c.diff),
      rows: rows.slice(offset, offset + limit),
      total: rows.length,
      limit,
      offset,
      statistics: this.statistics(c, query),
    };
  }

  /**
   * Whether the changes are real: paired tests over every matched row (not the page, nor the
   * `status` filter), Holm-corrected; seeded by the two run ids so the same runs give the same intervals.
   */
  statistics(c: Compared, query: Pick<DiffQuery, 'alpha' | 'min_rows'>): DiffStatistics {
    return diffStatistics(c.diff.rows, c.metrics, {
      alpha: query.alpha,
      minRows: query.min_rows,
      seedKey: `${c.base.id}:${c.candidate.id}`,
      dimensionsOf: (rowId) => c.dimensions.get(rowId),
    });
  }

  /** The diff as a file in chunks, for the response to stream: the rows are never one string. */
  async export(access: WorkspaceAccess, query: DiffQuery, format: 'csv' | 'json'): Promise<DiffFile> {
    const c = await this.compare(access, query);
    const rows = query.status ? c.diff.rows.filter((r) => r.status === query.status) : c.diff.rows;
    const filename = `diff-${c.base.id.slice(0, 8)}-${c.candidate.id.slice(0, 8)}.${format}`;
    if (format === 'csv')
      return {
        chunks: diffCsvChunks(
          rows,
          c.metrics.map((m) => m.name),
        ),
        contentType: 'text/csv; charset=utf-8',
        filename,
      };
    const head = JSON.stringify({
      base_run_id: c.base.id,
      candidate_run_id: c.candidate.id,
      metrics: c.metrics.map((m) => m.name),
      summary: await this.validity.diffSummary(c.base, c.candidate, c.diff),
      statistics: this.statistics(c, query),
    });
    return { chunks: jsonWithRows(head, rows), contentType: 'application/json', filename };
  }

  /** One row of the diff, from that row's items alone (a row's status and deltas depend on nothing else). */
  async row(access: WorkspaceAccess, query: DiffQuery & { row_id: string }): Promise<RunDiffRowResponse> {
    const { base, candidate, metrics } = await this.runsCompared(access, query);
    const [baseItems, candidateItems] = [
      await this.runs.itemsByIds(base.id, [query.row_id]),
      await this.runs.itemsByIds(candidate.id, [query.row_id]),
    ];
    const diffRow = diffRows(answered(baseItems, base), answered(candidateItems, candidate), metrics, {
      tolerance: query.tolerance,
    }).rows[0];
    if (!diffRow) throw new DomainError(RunErrors.diff_row_not_found, `Neither run has row ${query.row_id}`);
    const baseItem = baseItems[0] ?? null;
    const candidateItem = candidateItems[0] ?? null;
    const c = { base, candidate };
    const row = (candidateItem ?? baseItem)!.data;
    const mapping = (candidateItem ? c.candidate : c.base).snapshot.mapping;
    const text = (v: unknown) => (v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v));
    const side = (i: RunItemRow | null) =>
      i
        ? {
            status: i.status,
            output: i.output,
            passed: i.passed,
            latency_ms: i.latency_ms,
            scores: i.scores ?? {},
            error: i.error,
          }
        : null;
    return {
      base_run_id: c.base.id,
      candidate_run_id: c.candidate.id,
      row_id: query.row_id,
      status: diffRow.status,
      row,
      input: text(valueAt(row, mapping.input ?? 'input')),
      expected_output: text(valueAt(row, mapping.expected_output ?? 'expected_output')),
      base: side(baseItem),
      candidate: side(candidateItem),
      metrics: diffRow.metrics,
    };
  }

  /** The row side by side as a PNG. */
  async rowImage(access: WorkspaceAccess, query: DiffQuery & { row_id: string }): Promise<Buffer> {
    const row = await this.row(access, query);
    const side = (s: RunDiffRowResponse['base'], label: string) =>
      s
        ? { label, output: s.output, passed: s.passed, error: s.error ? `${s.error.code}: ${s.error.message}` : null }
        : null;
    const [base, candidate] = [
      await this.runs.find(access.workspaceId, query.base),
      await this.runs.find(access.workspaceId, query.candidate),
    ];
    return renderDiffRowPng({
      row_id: row.row_id,
      status: row.status,
      input: row.input,
      expected_output: row.expected_output,
      base: side(row.base, base?.name ?? query.base),
      candidate: side(row.candidate, candidate?.name ?? query.candidate),
      metrics: Object.entries(row.metrics).map(([name, m]) => ({
        name,
        base: m.base,
        candidate: m.candidate,
        delta: m.delta,
      })),
    });
  }

  /** The two runs and the metrics of either (the base's spec where both have one). */
  private async runsCompared(
    access: WorkspaceAccess,
    query: Pick<DiffQuery, 'base' | 'candidate'>,
  ): Promise<Pick<Compared, 'base' | 'candidate' | 'metrics'>> {
    const base = await this.runsService.require(access, query.base);
    const candidate = await this.runsService.require(access, query.candidate);
    const byName = new Map<string, RunMetricSpec>();
    for (const m of [...base.snapshot.metrics, ...candidate.snapshot.metrics])
      if (!byName.has(m.name))
        byName.set(m.name, { name: m.name, better: m.better, gating: m.gating, min_pass_rate: m.min_pass_rate });
    return { base, candidate, metrics: [...byName.values()] };
  }

  /**
   * The diff of two runs read a page at a time (keyset, RUN_PAGE_SIZE), the base's items and
   * then the candidate's, each folded a row at a time as it comes: what is kept is a verdict, an
   * output digest and a score per metric per row (RunFold), then the diff rows — never the items,
   * their row data or outputs.
   */
  async compare(
    access: WorkspaceAccess,
    query: Pick<DiffQuery, 'base' | 'candidate' | 'tolerance'>,
  ): Promise<Compared> {
    const { base, candidate, metrics } = await this.runsCompared(access, query);
    const ordinal = new Map<string, number>();
    // The candidate's dimension values win: it ran on the version under review.
    const dimensions = new Map<string, Record<string, string | null>>();
    const fold = async (run: RunEntity) => {
      const folded = new RunFold(metrics);
      const pages = itemPages((from, limit) => this.runs.diffItems(run.id, from, limit), this.config.env.RUN_PAGE_SIZE);
      for await (const page of pages) {
        for (const item of page) {
          ordinal.set(item.row_id, Number(item.ordinal));
          if (item.dimensions) dimensions.set(item.row_id, item.dimensions);
        }
        for (const item of answered(page, run)) folded.add(item);
      }
      return folded.result();
    };
    const diff = diffFolded(await fold(base), await fold(candidate), metrics, { tolerance: query.tolerance });
    // Within a status, rows keep their dataset order.
    const rank = new Map(diff.rows.map((row, i) => [row.row_id, i]));
    diff.rows.sort((a, b) =>
      a.status === b.status
        ? ordinal.get(a.row_id)! - ordinal.get(b.row_id)!
        : rank.get(a.row_id)! - rank.get(b.row_id)!,
    );
    return { base, candidate, metrics, diff, dimensions };
  }
}

/** The answered items as results; a row whose call failed counts as failed when the pass rule says errors fail. */
function answered(items: Array<DiffItemRow | RunItemRow>, run: RunEntity): ItemResult[] {
  return items
    .filter((i) => i.status !== 'pending')
    .map((i) => ({
      ...itemResult(i),
      passed: i.status === 'error' && run.snapshot.pass_rule.errors_fail ? false : i.passed,
    }));
}

/** A JSON object (`head`, already written) with a `rows` array after its fields, written a thousand rows at a time. */
function* jsonWithRows(head: string, rows: readonly DiffRow[]): Generator<string> {
  yield `${head.slice(0, -1)},"rows":[`;
  for (let start = 0; start < rows.length; start += 1000)
    yield (
      (start ? ',' : '') +
      rows
        .slice(start, start + 1000)
        .map((r) => JSON.stringify(r))
        .join(',')
    );
  yield ']}';
}
