import { Injectable } from '@nestjs/common';
import { AppConfig } from '#libs/config/app-config.js';
import type { ItemResult, RunSummary } from '#libs/evaluation/runs/run.types.js';
import { FailureAnalysis, type FailureReport } from '#libs/evaluation/runs/failures.js';
import { SummaryAccumulator } from '#libs/evaluation/runs/summary.js';
import type { RunEntity } from '../entities/run.entity.js';
import { itemPages } from './run-item-pages.js';
import { RunsRepository, type SummaryItemRow } from '../runs.repository.js';

/** Summary rows read at a time, per row the executor reads: they carry no row data or output. */
const SUMMARY_PAGE_FACTOR = 4;

/**
 * Run summaries and failure reports read from the database a page at a time, in the items'
 * order (itemPages), into accumulators: the memory of a summary is a few numbers per item, never the items.
 */
@Injectable()
export class RunSummaries {
  constructor(
    private readonly runs: RunsRepository,
    private readonly config: AppConfig,
  ) {}

  /** The summary over the run's answered items (`scored`: only those scored so far, as while it runs). */
  async summarize(run: RunEntity, which: { scored: boolean }): Promise<RunSummary> {
    const summary = new SummaryAccumulator(run.snapshot.metrics, run.snapshot.pass_rule, run.total);
    for await (const page of this.answered(run.id, which.scored))
      for (const item of page) summary.add(itemResult(item));
    return summary.result();
  }

  /** Where the run fails, over its answered items. */
  async failures(run: RunEntity): Promise<FailureReport> {
    const analysis = new FailureAnalysis(run.snapshot.metrics);
    for await (const page of this.answered(run.id, false)) for (const item of page) analysis.add(itemResult(item));
    return analysis.result();
  }

  /** The run's answered items in their order, a page at a time. */
  private answered(runId: string, scored: boolean): AsyncGenerator<SummaryItemRow[]> {
    return itemPages(
      (from, limit) => this.runs.summaryItems(runId, from, limit, scored),
      this.config.env.RUN_PAGE_SIZE * SUMMARY_PAGE_FACTOR,
    );
  }
}

/** An answered item as summaries, diffs and gates read it. */
export function itemResult(i: SummaryItemRow & { output?: string | null }): ItemResult {
  return {
    row_id: i.row_id,
    repetition: i.repetition,
    status: i.status as 'done' | 'error',
    output: i.output ?? null,
    latency_ms: i.latency_ms,
    cost_usd: i.cost_usd,
    error: i.error,
    scores: i.scores ?? {},
    passed: i.passed,
    dimensions: i.dimensions,
  };
}
