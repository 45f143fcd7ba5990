/** OpenLLMetry (Traceloop) onto the canonical span. */
import type { SpanKind } from '../span.types.js';
import { GEN_AI, TRACELOOP } from './attributes.js';
import { mapGenAi } from './genai.js';
import { Ctx } from './mapping-context.js';

// ---------------------------------------------------------------------------------------------
// OpenLLMetry (Traceloop)
// ---------------------------------------------------------------------------------------------

export const TRACELOOP_KIND: Record<string, SpanKind> = {
  workflow: 'chain',
  task: 'chain',
  agent: 'agent',
  tool: 'tool',
};
export const TRACELOOP_REQUEST_KIND: Record<string, SpanKind> = {
  chat: 'llm',
  completion: 'llm',
  embedding: 'embedding',
  rerank: 'reranker',
};

export function mapOpenLlmetry(ctx: Ctx): void {
  if (!ctx.setKind(TRACELOOP.SPAN_KIND, TRACELOOP_KIND, (x) => x.toLowerCase()))
    ctx.setKind(TRACELOOP.LLM_REQUEST_TYPE, TRACELOOP_REQUEST_KIND, (x) => x.toLowerCase());
  // Span names are `<entity>.<kind>`; the entity name is the component's own name.
  ctx.setString('name', [TRACELOOP.ENTITY_NAME]);
  ctx.setValue('input', TRACELOOP.ENTITY_INPUT, true);
  ctx.setValue('output', TRACELOOP.ENTITY_OUTPUT, true);
  ctx.setNumber('tokens_total', [TRACELOOP.LLM_USAGE_TOTAL_TOKENS]);
  ctx.setString('session_id', [`${TRACELOOP.ASSOCIATION_PREFIX}session_id`]);
  ctx.setString('user_id', [`${TRACELOOP.ASSOCIATION_PREFIX}user_id`]);
  if (ctx.out.kind === 'tool' && ctx.out.name !== null && !ctx.has(GEN_AI.TOOL_NAME)) {
    // A @tool-decorated function: the entity is the tool, its input the arguments.
    ctx.out.tool_calls.push({ name: ctx.out.name, arguments: ctx.out.input ?? null, id: null });
    ctx.mark('tool_calls', TRACELOOP.ENTITY_NAME, ...(ctx.out.input !== undefined ? [TRACELOOP.ENTITY_INPUT] : []));
  }
  mapGenAi(ctx);
  ctx.setString('model', [TRACELOOP.LLM_RESPONSE_MODEL, TRACELOOP.LLM_REQUEST_MODEL]);
}
