import { Injectable } from '@nestjs/common';
import { parquetWriteRows } from 'hyparquet-writer';
import type { Writable } from 'node:stream';
import { NotFoundError } from '#libs/common/domain-error.js';
import { attachment, type FileAnswer } from '#libs/common/file-answer.js';
import { streamWriter } from '#libs/common/parquet-stream.js';
import { UrlSigner } from '#libs/common/signed-url.js';
import { valueAt } from '#libs/evaluation/row-context.js';
import { reportedScore } from '#libs/evaluation/runs/stats.js';
import { AppConfig } from '#libs/config/app-config.js';
import type { FilterContext } from '#libs/database/query-language.js';
import { QueryService } from '../../datasets/rows/query.service.js';
import { VersionsService } from '../../datasets/versions/versions.service.js';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import type { RunResultsQueryRequest, RunResultsQueryResponse, RunSessionResponse } from '../dto/results.dto.js';
import type { RunEntity } from '../entities/run.entity.js';
import { resultsContext, RunsRepository, type RunItemRow } from '../runs.repository.js';
import { itemPages } from '../execution/run-item-pages.js';
import { JudgeValidityService } from '../validity/judge-validity.service.js';
import { RunSummaries } from '../execution/run-summaries.service.js';
import { RunsService } from '../runs.service.js';
import { itemDto } from '../runs.mapper.js';

/** The result fields the query language sees on each item (`row.<column>` for the dataset row). */
const RESULT_FIELDS = [
  'row',
  'row_id',
  'repetition',
  'session_id',
  'turn',
  'status',
  'output',
  'latency_ms',
  'cost_usd',
  'usage',
  'extras',
  'error',
  'scores',
  'passed',
  'dimensions',
];

/**
 * The table of POST /runs/{run_id}/query, which its filter and sort name too: the dataset row's
 * own columns, then the result under `_`-prefixed names and each metric's score as
 * `_score.<metric>` (RunsRepository's `resultsContext`). One vocabulary for what it answers and
 * what it filters on.
 */
const TABLE_RESULT_COLUMNS = ['_repetition', '_status', '_output', '_passed', '_latency_ms', '_error'];

/** What a run produced: aggregates, filtered results, conversations, failure analysis, and a Parquet export. */
@Injectable()
export class ResultsService {
  constructor(
    private readonly runsService: RunsService,
    private readonly runs: RunsRepository,
    private readonly query: QueryService,
    private readonly versions: VersionsService,
    private readonly signer: UrlSigner,
    private readonly config: AppConfig,
    private readonly summaries: RunSummaries,
    private readonly validity: JudgeValidityService,
  ) {}

  /** Per metric mean, pass rate and distribution, per dimension breakdown, latency and cost; over the items scored so far while the run is going. */
  async results(access: WorkspaceAccess, id: string): Promise<Record<string, unknown>> {
    const run = await this.runsService.require(access, id);
    const summary = await this.summaries.summarize(run, { scored: true });
    return {
      run_id: id,
      state: run.state,
      final: run.finishedAt !== null,
      passed: run.passed,
      pass_rule: run.snapshot.pass_rule,
      items: run.total,
      scored: summary.rows,
      summary: await this.validity.withCorrected(run, summary),
    };
  }

  /** A page of results matching a filter in the dataset query language. */
  async queryResults(
    access: WorkspaceAccess,
    id: string,
    body: RunResultsQueryRequest,
  ): Promise<RunResultsQueryResponse> {
    await this.runsService.require(access, id);
    return this.page(resultsContext('results', RESULT_FIELDS), id, body);
  }

  /**
   * The same results flattened for a table: the row's columns beside `_row_id`, `_repetition`,
   * `_status`, `_output`, `_passed`, `_latency_ms`, `_error` and `_score.<metric>`; the filter
   * and sort name those same columns (`{"field": "topic", ...}`, `{"field": "_passed", ...}`).
   */
  async queryTable(
    access: WorkspaceAccess,
    id: string,
    body: RunResultsQueryRequest,
  ): Promise<Record<string, unknown>> {
    const run = await this.runsService.require(access, id);
    const { dataset } = run.snapshot;
    const { version } = await this.versions.require(access, dataset.id, dataset.version_id);
    const columns = new Set([
      ...version.columns.map((c) => c.name),
      ...TABLE_RESULT_COLUMNS,
      ...run.snapshot.metrics.map((m) => `_score.${m.name}`),
    ]);
    const page = await this.page(resultsContext('table', columns), id, body);
    return {
      run_id: id,
      total: page.total,
      limit: page.limit,
      offset: page.offset,
      items: page.items.map((i) => ({
        _row_id: i.row_id,
        _repetition: i.repetition,
        ...i.row,
        _status: i.status,
        _output: i.output,
        _passed: i.passed,
        _latency_ms: i.latency_ms,
        _error: i.error?.code ?? null,
        ...Object.fromEntries(
          Object.entries(i.scores).map(([name, s]) => [
            `_score.${name}`,
            reportedScore(s as { score: number | null; normalized?: number | null }),
          ]),
        ),
      })),
    };
  }

  private async page(ctx: FilterContext, id: string, body: RunResultsQueryRequest): Promise<RunResultsQueryResponse> {
    const compiled = this.query.compileQuery(ctx, body.filter, body.sort);
    const limit = body.limit ?? 50;
    const offset = body.offset ?? 0;
    const { rows, total } = await this.runs.queryItems(id, compiled, limit, offset);
    return { run_id: id, items: rows.map(itemDto), total, limit, offset };
  }

  async session(access: WorkspaceAccess, id: string, sessionId: string): Promise<RunSessionResponse> {
    await this.runsService.require(access, id);
    const turns = await this.runs.session(id, sessionId);
    if (!turns.length) throw new NotFoundError('session', sessionId);
    const verdicts = turns.map((t) => t.passed).filter((p): p is boolean => p !== null);
    return {
      run_id: id,
      session_id: sessionId,
      turns: turns.map(itemDto),
      passed: verdicts.length ? verdicts.every(Boolean) : null,
    };
  }

  /** Where the run fails: failed rows by metric and by dimension value (worst first), and the most frequent errors with example rows. */
  async analysis(access: WorkspaceAccess, id: string): Promise<Record<string, unknown>> {
    const run = await this.runsService.require(access, id);
    return { run_id: id, state: run.state, ...(await this.summaries.failures(run)) };
  }

  parquetUrl(origin: string, access: WorkspaceAccess, run: RunEntity): Record<string, unknown> {
    const filename = `run-${run.id}.parquet`;
    const path = `/files/runs/${run.id}/${filename}`;
    const signed = this.signer.sign(origin, path, {}, this.config.env.SIGNED_URL_TTL_SECONDS);
    void access;
    return {
      url: signed.url,
      method: 'GET',
      expires_at: signed.expires_at,
      format: 'parquet',
      filename,
      run_id: run.id,
      rows: run.total,
    };
  }

  /** The results as Parquet (signed URL from parquet-url; `query`, the request's own, checked first), read a page at a time and written a row group at a time: a row per item, the row's mapped fields, output, latency, cost, verdict, and a score and verdict column per metric. */
  async parquetFile(query: Record<string, unknown>, runId: string, filename: string): Promise<FileAnswer> {
    this.signer.assertValid(`/files/runs/${runId}/${encodeURIComponent(filename)}`, query);
    const run = await this.runs.findUnscoped(runId);
    if (!run) throw new NotFoundError('run', runId);
    return {
      contentType: 'application/vnd.apache.parquet',
      headers: { 'Content-Disposition': attachment(filename) },
      body: (out) => this.writeParquet(out, run),
    };
  }

  private async writeParquet(out: Writable, run: RunEntity): Promise<void> {
    const items = itemPages((from, limit) => this.runs.itemPage(run.id, from, limit), this.config.env.RUN_PAGE_SIZE);
    const metrics = run.snapshot.metrics.map((m) => m.name);
    const mapping = run.snapshot.mapping;
    const text = (v: unknown) => (v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v));
    await parquetWriteRows({
      writer: streamWriter(out),
      rowGroupSize: 10_000,
      columns: [
        { name: 'row_id', type: 'STRING', nullable: false },
        { name: 'repetition', type: 'INT32', nullable: false },
        { name: 'session_id', type: 'STRING', nullable: true },
        { name: 'turn', type: 'INT32', nullable: true },
        { name: 'input', type: 'STRING', nullable: true },
        { name: 'expected_output', type: 'STRING', nullable: true },
        { name: 'status', type: 'STRING', nullable: false },
        { name: 'output', type: 'STRING', nullable: true },
        { name: 'latency_ms', type: 'DOUBLE', nullable: true },
        { name: 'cost_usd', type: 'DOUBLE', nullable: true },
        { name: 'error_code', type: 'STRING', nullable: true },
        { name: 'passed', type: 'BOOLEAN', nullable: true },
        ...metrics.flatMap((m) => [
          { name: `score_${m}`, type: 'DOUBLE' as const, nullable: true },
          { name: `passed_${m}`, type: 'BOOLEAN' as const, nullable: true },
        ]),
        { name: 'row_json', type: 'STRING', nullable: false },
      ],
      rows: rowsOf(items, (i) => ({
        row_id: i.row_id,
        repetition: i.repetition,
        session_id: i.session_id,
        turn: i.turn,
        input: text(valueAt(i.data, mapping.input ?? 'input')),
        expected_output: text(valueAt(i.data, mapping.expected_output ?? 'expected_output')),
        status: i.status,
        output: i.output,
        latency_ms: i.latency_ms,
        cost_usd: i.cost_usd,
        error_code: i.error?.code ?? null,
        passed: i.passed,
        ...Object.fromEntries(
          metrics.flatMap((m) => [
            [`score_${m}`, i.scores?.[m]?.score ?? null],
            [`passed_${m}`, i.scores?.[m]?.passed ?? null],
          ]),
        ),
        row_json: JSON.stringify(i.data),
      })),
    });
  }
}

/** Each item of the pages as a row. */
async function* rowsOf<T>(pages: AsyncIterable<RunItemRow[]>, row: (i: RunItemRow) => T): AsyncGenerator<T> {
  for await (const page of pages) for (const item of page) yield row(item);
}
