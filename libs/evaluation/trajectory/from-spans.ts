/**
 * The trajectory an agent's own trace shows: its spans in start order read as steps. Model calls
 * (llm spans) and tool calls (tool spans, and the calls an llm span requested for tools that have
 * no span of their own, as trace enrichment counts them) are the steps that matter; agents,
 * retrievers, embedders, rerankers and guardrails are steps too; chains and unknown spans are
 * structure, not steps. Pure: spans in, a trajectory out.
 */
import type { CanonicalSpan } from '#libs/traces/span.types.js';
import { parseArguments } from './tool-calls.js';
import { boundTrajectory, type StepType, type Trajectory, type TrajectoryStep } from './trajectory.types.js';

const STEP_OF_KIND: Partial<Record<string, StepType>> = {
  llm: 'llm',
  tool: 'tool_call',
  agent: 'agent',
  retriever: 'retrieval',
  embedding: 'other',
  reranker: 'other',
  guardrail: 'other',
};

type SpanRow = Pick<
  CanonicalSpan,
  | 'span_id'
  | 'parent_span_id'
  | 'name'
  | 'kind'
  | 'start_time'
  | 'duration_ms'
  | 'status'
  | 'error'
  | 'input'
  | 'output'
  | 'model'
  | 'tool_calls'
>;

function startOf(span: SpanRow): number {
  const t = Date.parse(span.start_time);
  return Number.isFinite(t) ? t : Number.POSITIVE_INFINITY;
}

/**
 * The spans in the order the agent went: a parent before its children, siblings by start time.
 * Times are kept to the millisecond, so steps of the same millisecond keep the order they came in
 * (the order they landed: an exporter sends spans as they end).
 */
function inTreeOrder(spans: SpanRow[]): SpanRow[] {
  const ids = new Set(spans.map((s) => s.span_id));
  const children = new Map<string | null, SpanRow[]>();
  for (const span of spans) {
    const parent = span.parent_span_id && ids.has(span.parent_span_id) ? span.parent_span_id : null;
    const list = children.get(parent);
    if (list) list.push(span);
    else children.set(parent, [span]);
  }
  // Stable sorts: ties keep the landing order.
  for (const list of children.values()) list.sort((a, b) => startOf(a) - startOf(b));
  const ordered: SpanRow[] = [];
  const stack = [...(children.get(null) ?? [])].reverse();
  while (stack.length) {
    const span = stack.pop()!;
    ordered.push(span);
    const below = children.get(span.span_id);
    if (below) for (let i = below.length - 1; i >= 0; i--) stack.push(below[i]);
  }
  return ordered;
}

/** The trajectory of one trace's spans (in landing order); `trace_id` names the trace. */
export function trajectoryFromSpans(spans: SpanRow[], traceId: string | null): Trajectory {
  const ordered = inTreeOrder(spans);
  // A tool executed under instrumentation is a tool span and a call its model requested: one step, the span's.
  const executed = new Set(ordered.filter((s) => s.kind === 'tool').map((s) => s.tool_calls?.[0]?.name ?? s.name));
  const steps: TrajectoryStep[] = [];
  for (const span of ordered) {
    const type = STEP_OF_KIND[span.kind];
    if (!type) continue;
    const common = {
      span_id: span.span_id,
      start_time: span.start_time ?? null,
      duration_ms: span.duration_ms ?? null,
      error: span.status === 'error' ? (span.error ?? 'error') : null,
    };
    if (type === 'tool_call') {
      const call = span.tool_calls?.[0];
      steps.push({
        type,
        name: call?.name ?? span.name,
        arguments: parseArguments(call?.arguments ?? span.input),
        output: span.output ?? null,
        call_id: call?.id ?? null,
        mcp_server: call?.mcp_server ?? null,
        ...common,
      });
      continue;
    }
    steps.push({
      type,
      name: (type === 'llm' ? span.model : null) ?? span.name,
      output: span.output ?? null,
      ...common,
    });
    if (type !== 'llm') continue;
    for (const call of span.tool_calls ?? [])
      if (!executed.has(call.name))
        steps.push({
          type: 'tool_call',
          name: call.name,
          arguments: parseArguments(call.arguments),
          call_id: call.id ?? null,
          span_id: span.span_id,
          start_time: span.start_time ?? null,
        });
  }
  return boundTrajectory({ source: 'trace', trace_id: traceId, steps });
}
