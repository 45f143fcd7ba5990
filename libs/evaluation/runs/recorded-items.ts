/**
 * Runs over recorded traces: each trace (or session) of a trace dataset version is a row whose
 * answer is already known. Its fields are read from its spans as online evaluators read them (a
 * span mapping), its trajectory, tokens and cost as the trace shows them. Pure: spans in, an item out.
 */
import { asText, targetContext, type TargetLevel, type TargetMapping } from '../online/targets.js';
import { trajectoryFromSpans } from '../trajectory/from-spans.js';
import type { Trajectory } from '../trajectory/trajectory.types.js';
import { enrichTrace } from '#libs/traces/enrichment.js';
import type { CanonicalSpan } from '#libs/traces/span.types.js';

export interface RecordedItem {
  /** The trace id, or the session id at the session level. */
  key: string;
  trace_id: string | null;
  session_id: string | null;
  /** What metrics and rubrics read: the mapped fields as text (`input`, `output`, `expected_output`, `context`), and the keys. */
  data: Record<string, unknown>;
  dimensions: Record<string, string>;
  output: string | null;
  latency_ms: number | null;
  usage: { prompt_tokens: number | null; completion_tokens: number | null; total_tokens: number | null } | null;
  cost_usd: number | null;
  trajectory: Trajectory;
  /** Why there is no answer: the mapped output is empty. */
  error: { code: string; message: string } | null;
}

/** The item of one trace's (or one session's) spans. */
export function recordedItem(
  spans: Array<Record<string, unknown>>,
  level: TargetLevel,
  key: string,
  mapping: TargetMapping,
): RecordedItem {
  const context = targetContext(spans, mapping);
  const canonical = spans as unknown as CanonicalSpan[];
  const enriched = enrichTrace(canonical);
  const traceId = level === 'trace' ? key : null;
  const sessionId = level === 'session' ? key : str(spans.find((s) => str(s.session_id))?.session_id);
  const output = asText(context.fields.output);
  const dimensions: Record<string, string> = {};
  if (context.service_name) dimensions.service = context.service_name;
  if (context.model) dimensions.model = context.model;
  return {
    key,
    trace_id: traceId,
    session_id: sessionId,
    data: {
      ...(traceId ? { trace_id: traceId } : {}),
      ...(sessionId ? { session_id: sessionId } : {}),
      input: asText(context.fields.input),
      output,
      expected_output: asText(context.fields.expected_output),
      context: asText(context.fields.context),
      started_at: context.observed_at.toISOString(),
    },
    dimensions,
    output,
    latency_ms: context.latency_ms,
    usage: context.tokens
      ? {
          prompt_tokens: context.tokens.prompt_tokens,
          completion_tokens: context.tokens.completion_tokens,
          total_tokens: context.tokens.prompt_tokens + context.tokens.completion_tokens,
        }
      : null,
    cost_usd: enriched.cost,
    trajectory: trajectoryFromSpans(canonical, traceId),
    // Failed steps show in the trajectory; the item fails only when there is no answer to score.
    error:
      output === null
        ? { code: 'no_output', message: 'the recorded trace has no value at the mapped output (mapping.output)' }
        : null,
  };
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}
