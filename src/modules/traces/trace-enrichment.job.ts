import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobHandler } from '#libs/queue/job-handler.decorator.js';
import { JobFailure } from '#libs/queue/job-outcome.js';
import { isTerminal, type JobContext } from '#libs/queue/job.types.js';
import { TrackedRecords } from '#libs/queue/tracked-records.service.js';
import { compactSpan, DEFAULT_PRICES, enrichTrace, type PriceTable } from '#libs/traces/enrichment.js';
import type { CanonicalSpan } from '#libs/traces/span.types.js';
import { VersionsService } from '../datasets/versions/versions.service.js';
import { TraceDatasets } from './trace-datasets.service.js';
import { TRACE_ENRICHMENT_RUNS, TracesRepository } from './traces.repository.js';
import { TRACE_ENRICH_JOB } from './traces.jobs.js';

const WRITE_BATCH = 1000;

/** The built-in price table with a request's prices over it. */
export function priceTable(
  overrides: Record<string, { input_per_1m: number; output_per_1m: number }> | null,
): PriceTable {
  if (!overrides) return DEFAULT_PRICES;
  const models = { ...DEFAULT_PRICES.models };
  for (const [model, price] of Object.entries(overrides)) models[model.toLowerCase()] = price;
  return { ...DEFAULT_PRICES, models };
}

/**
 * Computes the per-trace fields of a trace version (duration, tokens, cost, errors, tool use,
 * loops) from its spans, trace by trace in pages, and replaces the version's results in one
 * transaction; progress is counted in traces. Memory: one page of rows and the current trace's
 * spans as compact records (compactSpan), however large the trace (docs/traces.md, "Large traces").
 */
@Injectable()
export class TraceEnricher {
  constructor(
    private readonly traces: TracesRepository,
    private readonly versions: VersionsService,
    private readonly traceDatasets: TraceDatasets,
    private readonly transactions: TransactionRunner,
    private readonly tracked: TrackedRecords,
  ) {}

  /** The queue marks the run running, keeps the progress reported and ends it when the job ends without it (`tracks`). */
  @JobHandler(TRACE_ENRICH_JOB, { maxAttempts: 3, tracks: TRACE_ENRICHMENT_RUNS })
  async enrich({ payload, signal, progress }: JobContext<typeof TRACE_ENRICH_JOB>): Promise<{ traces: number }> {
    const run = await this.traces.findEnrichmentRunUnscoped(payload.enrichment_run_id);
    if (!run || isTerminal(run.state)) return { traces: Number(run?.progress?.done ?? 0) };
    const version = await this.versions.find(run.workspace_id, run.dataset_id, run.version_id);
    if (!version) throw new JobFailure('the trace version was deleted', { code: 'version_gone', retry: false });
    const total = await this.traceDatasets.countTraces(run.dataset_id, version.number);
    await progress({ done: 0, total });
    const prices = priceTable(run.prices);
    const results: Array<{ trace_id: string; data: unknown }> = [];
    let current: CanonicalSpan[] = [];
    const finish = () => {
      if (current.length) results.push({ trace_id: current[0].trace_id, data: enrichTrace(current, prices) });
      current = [];
    };
    for await (const page of this.traceDatasets.spansByTrace(run.dataset_id, version.number)) {
      signal.throwIfAborted();
      // Held compact: a page of rows at a time, the current trace only as what enrichment reads.
      for (const data of page) {
        if (current.length && current[0].trace_id !== data.trace_id) finish();
        current.push(compactSpan(data));
      }
      await progress({ done: results.length, total });
    }
    finish();
    await this.transactions.run(async () => {
      await this.traces.clearEnrichment(run.version_id);
      for (let i = 0; i < results.length; i += WRITE_BATCH)
        await this.traces.appendEnrichment(
          run.workspace_id,
          run.dataset_id,
          run.version_id,
          results.slice(i, i + WRITE_BATCH),
        );
      await this.tracked.succeed(TRACE_ENRICHMENT_RUNS, run.id, { done: results.length, total: results.length });
    });
    return { traces: results.length };
  }
}
