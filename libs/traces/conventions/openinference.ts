/** OpenInference (Arize Phoenix) onto the canonical span. */
import { OpenInferenceSpanKind, SemanticConventions as OI } from '@arizeai/openinference-semantic-conventions';
import type { AttributeValue, RetrievedDocument, SpanKind, ToolCall } from '../span.types.js';
import { Ctx, parseJsonish, subRows, toNumber, toStr, type Row } from './mapping-context.js';

// ---------------------------------------------------------------------------------------------
// OpenInference
// ---------------------------------------------------------------------------------------------

export const OI_KIND: Record<string, SpanKind> = {
  [OpenInferenceSpanKind.LLM]: 'llm',
  [OpenInferenceSpanKind.CHAIN]: 'chain',
  [OpenInferenceSpanKind.TOOL]: 'tool',
  [OpenInferenceSpanKind.AGENT]: 'agent',
  [OpenInferenceSpanKind.RETRIEVER]: 'retriever',
  [OpenInferenceSpanKind.EMBEDDING]: 'embedding',
  [OpenInferenceSpanKind.RERANKER]: 'reranker',
  [OpenInferenceSpanKind.GUARDRAIL]: 'guardrail',
  [OpenInferenceSpanKind.EVALUATOR]: 'evaluator',
  // A prompt-template render step sits in a pipeline like any chain step.
  [OpenInferenceSpanKind.PROMPT]: 'chain',
};

/** OpenInference message rows -> [{role, content, ...}]; marks the keys it translated. */
export function oiMessages(ctx: Ctx, field: string, prefix: string): Array<Record<string, AttributeValue>> {
  const messages: Array<Record<string, AttributeValue>> = [];
  for (const [, row] of ctx.indexed(prefix)) {
    const msg: Record<string, AttributeValue> = {};
    const take = (rest: string, as: string): void => {
      const cell = row.get(rest);
      if (cell) {
        msg[as] = cell.value;
        ctx.mark(field, cell.key);
      }
    };
    take(OI.MESSAGE_ROLE, 'role');
    take(OI.MESSAGE_CONTENT, 'content');
    take(OI.MESSAGE_NAME, 'name');
    take(OI.MESSAGE_TOOL_CALL_ID, 'tool_call_id');
    const parts: AttributeValue[] = [];
    for (const [, part] of subRows(row, OI.MESSAGE_CONTENTS)) {
      const type = part.get(OI.MESSAGE_CONTENT_TYPE);
      const text = part.get(OI.MESSAGE_CONTENT_TEXT);
      if (!text) continue; // image/audio parts stay unmapped (kept) rather than half-translated
      parts.push({ type: type ? type.value : 'text', text: text.value });
      ctx.mark(field, text.key, ...(type ? [type.key] : []));
    }
    if (parts.length > 0 && msg.content === undefined) msg.content = parts;
    const calls = oiToolCalls(row, (k) => ctx.mark(field, k));
    if (calls.length > 0) msg.tool_calls = calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
    if (Object.keys(msg).length > 0) messages.push(msg);
  }
  return messages;
}

export function oiToolCalls(row: Row, mark: (key: string) => void): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const [, tc] of subRows(row, OI.MESSAGE_TOOL_CALLS)) {
    const name = tc.get(OI.TOOL_CALL_FUNCTION_NAME);
    if (!name) continue;
    const args = tc.get(OI.TOOL_CALL_FUNCTION_ARGUMENTS_JSON);
    const id = tc.get(OI.TOOL_CALL_ID);
    calls.push({
      name: String(name.value),
      arguments: args ? parseJsonish(args.value) : null,
      id: id ? String(id.value) : null,
    });
    mark(name.key);
    if (args) mark(args.key);
    if (id) mark(id.key);
  }
  return calls;
}

export function oiDocuments(ctx: Ctx, prefix: string): RetrievedDocument[] {
  const docs: RetrievedDocument[] = [];
  for (const [, row] of ctx.indexed(prefix)) {
    const id = row.get(OI.DOCUMENT_ID);
    const content = row.get(OI.DOCUMENT_CONTENT);
    const score = row.get(OI.DOCUMENT_SCORE);
    const metaCells = [...row.entries()].filter(
      ([rest]) => rest === OI.DOCUMENT_METADATA || rest.startsWith(`${OI.DOCUMENT_METADATA}.`),
    );
    if (!id && !content && !score && metaCells.length === 0) continue;
    let metadata: AttributeValue = null;
    if (metaCells.length === 1 && metaCells[0][0] === OI.DOCUMENT_METADATA)
      metadata = parseJsonish(metaCells[0][1].value);
    else if (metaCells.length > 0)
      metadata = Object.fromEntries(
        metaCells.map(([rest, c]) => [rest.slice(OI.DOCUMENT_METADATA.length + 1), c.value]),
      );
    docs.push({
      id: id ? toStr(id.value) : null,
      content: content ? toStr(content.value) : null,
      score: score ? toNumber(score.value) : null,
      metadata,
    });
    ctx.mark(
      'retrieved_documents',
      ...[id, content, score].filter((c) => c !== undefined).map((c) => c!.key),
      ...metaCells.map(([, c]) => c.key),
    );
  }
  return docs;
}

export function mapOpenInference(ctx: Ctx): void {
  const a = ctx.attrs;
  ctx.setKind(OI.OPENINFERENCE_SPAN_KIND, OI_KIND, (x) => x.toUpperCase());
  ctx.setComponentName([OI.AGENT_NAME], [OI.TOOL_NAME]);
  const isJson = (mimeKey: string): boolean => String(a[mimeKey] ?? '').toLowerCase() === 'application/json';
  ctx.setValue(
    'input',
    OI.INPUT_VALUE,
    isJson(OI.INPUT_MIME_TYPE),
    ctx.has(OI.INPUT_MIME_TYPE) ? [OI.INPUT_MIME_TYPE] : [],
  );
  ctx.setValue(
    'output',
    OI.OUTPUT_VALUE,
    isJson(OI.OUTPUT_MIME_TYPE),
    ctx.has(OI.OUTPUT_MIME_TYPE) ? [OI.OUTPUT_MIME_TYPE] : [],
  );
  if (ctx.empty('input')) {
    const msgs = oiMessages(ctx, 'input', OI.LLM_INPUT_MESSAGES);
    if (msgs.length > 0) ctx.out.input = msgs;
  }
  if (ctx.empty('output')) {
    const msgs = oiMessages(ctx, 'output', OI.LLM_OUTPUT_MESSAGES);
    if (msgs.length > 0) ctx.out.output = msgs;
  }
  ctx.setString('model', [
    OI.LLM_MODEL_NAME,
    OI.LLM_RESPONSE_MODEL_NAME,
    OI.LLM_REQUEST_MODEL_NAME,
    OI.EMBEDDING_MODEL_NAME,
    OI.RERANKER_MODEL_NAME,
  ]);
  ctx.setNumber('tokens_input', [OI.LLM_TOKEN_COUNT_PROMPT]);
  ctx.setNumber('tokens_output', [OI.LLM_TOKEN_COUNT_COMPLETION]);
  ctx.setNumber('tokens_total', [OI.LLM_TOKEN_COUNT_TOTAL]);
  ctx.setNumber('cost', [OI.LLM_COST_TOTAL]);
  ctx.setString('session_id', [OI.SESSION_ID]);
  ctx.setString('user_id', [OI.USER_ID]);

  // Tool calls the model asked for (output messages), then the call a TOOL span executes.
  for (const [, row] of ctx.indexed(OI.LLM_OUTPUT_MESSAGES))
    ctx.out.tool_calls.push(...oiToolCalls(row, (k) => ctx.mark('tool_calls', k)));
  if (ctx.has(OI.TOOL_NAME) && ctx.out.tool_calls.length === 0) {
    // tool.parameters is the tool's parameter schema; the actual arguments of a TOOL span are its input.
    const args = ctx.has(OI.INPUT_VALUE)
      ? { key: OI.INPUT_VALUE, value: ctx.out.input ?? null }
      : ctx.first([OI.TOOL_PARAMETERS]);
    const id = ctx.first([OI.TOOL_ID]);
    ctx.out.tool_calls.push({
      name: String(a[OI.TOOL_NAME]),
      arguments: args ? (args.key === OI.TOOL_PARAMETERS ? parseJsonish(args.value) : args.value) : null,
      id: id ? toStr(id.value) : null,
    });
    ctx.mark('tool_calls', OI.TOOL_NAME, ...(args ? [args.key] : []), ...(id ? [id.key] : []));
  }
  ctx.out.retrieved_documents.push(...oiDocuments(ctx, OI.RETRIEVAL_DOCUMENTS));
  if (ctx.out.kind === 'reranker') ctx.out.retrieved_documents.push(...oiDocuments(ctx, OI.RERANKER_OUTPUT_DOCUMENTS));
}
