/** Langfuse onto the canonical span. */
import { SemanticConventions as OI } from '@arizeai/openinference-semantic-conventions';
import type { AttributeValue, SpanKind } from '../span.types.js';
import { GEN_AI, LANGFUSE } from './attributes.js';
import { mapGenAi } from './genai.js';
import { Ctx, isObject, parseJsonish, toNumber, toStr } from './mapping-context.js';

// ---------------------------------------------------------------------------------------------
// Langfuse
// ---------------------------------------------------------------------------------------------

export const LANGFUSE_KIND: Record<string, SpanKind> = {
  generation: 'llm',
  agent: 'agent',
  tool: 'tool',
  chain: 'chain',
  retriever: 'retriever',
  evaluator: 'evaluator',
  embedding: 'embedding',
  guardrail: 'guardrail',
  // A generic Langfuse span is a step of a pipeline, the role OpenInference calls CHAIN.
  span: 'chain',
};

export function jsonObject(v: AttributeValue | undefined): { [key: string]: AttributeValue } | null {
  if (v === undefined || v === null) return null;
  const p = parseJsonish(v);
  return isObject(p) ? p : null;
}

export function mapLangfuse(ctx: Ctx): void {
  const a = ctx.attrs;
  ctx.setKind(LANGFUSE.OBSERVATION_TYPE, LANGFUSE_KIND, (x) => x.toLowerCase());
  ctx.setValue('input', LANGFUSE.OBSERVATION_INPUT, true);
  ctx.setValue('output', LANGFUSE.OBSERVATION_OUTPUT, true);
  // Trace-level input/output sits on the root span when the observation has none of its own.
  ctx.setValue('input', LANGFUSE.TRACE_INPUT, true);
  ctx.setValue('output', LANGFUSE.TRACE_OUTPUT, true);
  ctx.setString('model', [LANGFUSE.OBSERVATION_MODEL]);
  const usage = jsonObject(a[LANGFUSE.OBSERVATION_USAGE]);
  if (usage) {
    const pick = (keys: string[]): number | null => {
      for (const k of keys) if (toNumber(usage[k]) !== null) return toNumber(usage[k]);
      return null;
    };
    const tin = pick(['input', 'prompt_tokens', 'input_tokens']);
    const tout = pick(['output', 'completion_tokens', 'output_tokens']);
    const ttot = pick(['total', 'total_tokens']);
    if (tin !== null) ctx.out.tokens_input = tin;
    if (tout !== null) ctx.out.tokens_output = tout;
    if (ttot !== null) ctx.out.tokens_total = ttot;
    for (const [f, v] of [
      ['tokens_input', tin],
      ['tokens_output', tout],
      ['tokens_total', ttot],
    ] as const)
      if (v !== null) ctx.mark(f, LANGFUSE.OBSERVATION_USAGE);
  }
  const cost = jsonObject(a[LANGFUSE.OBSERVATION_COST]);
  if (cost) {
    const total = toNumber(cost.total);
    // Langfuse itself sums the cost details when no total is given.
    const parts = Object.values(cost)
      .map((v) => toNumber(v))
      .filter((n): n is number => n !== null);
    const value = total ?? (parts.length > 0 ? parts.reduce((x, y) => x + y, 0) : null);
    if (value !== null) {
      ctx.out.cost = value;
      ctx.mark('cost', LANGFUSE.OBSERVATION_COST);
    }
  }
  ctx.setString('session_id', [LANGFUSE.SESSION_ID, OI.SESSION_ID]);
  ctx.setString('user_id', [LANGFUSE.USER_ID, OI.USER_ID]);
  if (String(a[LANGFUSE.OBSERVATION_LEVEL] ?? '').toUpperCase() === 'ERROR') {
    ctx.mark('status', LANGFUSE.OBSERVATION_LEVEL);
    const msg = toStr(a[LANGFUSE.OBSERVATION_STATUS_MESSAGE]);
    ctx.out.error = msg ?? 'ERROR';
    ctx.mark('error', msg !== null ? LANGFUSE.OBSERVATION_STATUS_MESSAGE : LANGFUSE.OBSERVATION_LEVEL);
  }
  if (ctx.out.kind === 'tool' && ctx.out.tool_calls.length === 0 && !ctx.has(GEN_AI.TOOL_NAME)) {
    // A Langfuse tool observation is the tool itself: its name and input are the call.
    ctx.out.tool_calls.push({ name: ctx.span.name, arguments: ctx.out.input ?? null, id: null });
    ctx.mark('tool_calls', '@span.name', ...(ctx.used.get('input') ?? []));
  }
  mapGenAi(ctx);
}
