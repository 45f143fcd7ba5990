import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { trajectoryFromSpans } from '#libs/evaluation/trajectory/from-spans.js';
import type { Trajectory } from '#libs/evaluation/trajectory/trajectory.types.js';
import type { TraceLink } from '#libs/evaluation/sut/sut.types.js';
import { enrichTrace } from '#libs/traces/enrichment.js';
import type { CanonicalSpan } from '#libs/traces/span.types.js';
import { TraceDatasets } from '../../traces/trace-datasets.service.js';

/** How often a run looks for a call's trace while it waits. */
const POLL_MS = 200;

/** The W3C trace context one SUT call carries: a fresh trace, and the run's call as its parent span. */
export interface CallContext {
  trace_id: string;
  span_id: string;
  traceparent: string;
}

/** What a call's own trace says, once it landed (or the wait ran out). */
export interface JoinedTrace {
  trace_id: string;
  spans: number;
  /** The SUT's entry span landed and nothing new came for the settle time; false when the wait ran out first. */
  complete: boolean;
  waited_ms: number;
  trajectory: Trajectory | null;
  usage: { prompt_tokens: number | null; completion_tokens: number | null; total_tokens: number | null } | null;
  cost_usd: number | null;
  errors: number;
}

/** A fresh trace context, as a W3C `traceparent` (version 00, sampled). */
export function callContext(): CallContext {
  const trace_id = randomBytes(16).toString('hex');
  const span_id = randomBytes(8).toString('hex');
  return { trace_id, span_id, traceparent: `00-${trace_id}-${span_id}-01` };
}

/**
 * Joins a run's rows to the traces their SUT exported of each call (a connection's `trace_link`):
 * waits, bounded, for a call's spans to land in the linked trace dataset, then reads from them
 * what the agent really did: its trajectory, tokens, cost and errors (docs/agents.md).
 */
@Injectable()
export class TraceJoins {
  constructor(private readonly traces: TraceDatasets) {}

  /**
   * The spans of `context`'s trace once its entry span (the span the SUT started under the call's
   * span, or a root of its own) has landed and nothing new has for `settle_ms`; what landed by
   * `wait_ms` otherwise. Aborting the signal ends the wait with what landed.
   */
  async join(workspaceId: string, link: TraceLink, context: CallContext, signal: AbortSignal): Promise<JoinedTrace> {
    const started = Date.now();
    const deadline = started + link.wait_ms;
    let datasetId: string | null = null;
    let spans: Array<Record<string, unknown>> = [];
    let changed = started;
    let complete = false;
    for (;;) {
      // The dataset may be created by the SUT's first export, during the run.
      datasetId ??= await this.traces.idByName(workspaceId, link.dataset);
      const landed = datasetId ? await this.traces.currentSpans(datasetId, 'trace_id', [context.trace_id]) : [];
      const now = Date.now();
      if (landed.length !== spans.length) changed = now;
      spans = landed;
      const entered = spans.some((s) => s.parent_span_id === context.span_id || !s.parent_span_id);
      if (entered && now - changed >= link.settle_ms) {
        complete = true;
        break;
      }
      if (now >= deadline || signal.aborted) break;
      await sleep(Math.min(POLL_MS, deadline - now), undefined, { signal }).catch(() => undefined);
    }
    return {
      ...this.read(context.trace_id, spans as unknown as CanonicalSpan[]),
      complete,
      waited_ms: Date.now() - started,
    };
  }

  private read(traceId: string, spans: CanonicalSpan[]): Omit<JoinedTrace, 'complete' | 'waited_ms'> {
    if (!spans.length) return { trace_id: traceId, spans: 0, trajectory: null, usage: null, cost_usd: null, errors: 0 };
    const enriched = enrichTrace(spans);
    const counted = enriched.tokens_input !== null || enriched.tokens_output !== null;
    return {
      trace_id: traceId,
      spans: spans.length,
      trajectory: trajectoryFromSpans(spans, traceId),
      usage: counted
        ? {
            prompt_tokens: enriched.tokens_input,
            completion_tokens: enriched.tokens_output,
            total_tokens: enriched.tokens_total,
          }
        : null,
      cost_usd: enriched.cost,
      errors: enriched.error_count,
    };
  }
}
