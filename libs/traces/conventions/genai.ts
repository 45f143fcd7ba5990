/** OpenTelemetry GenAI onto the canonical span: also the fallback for the fields other conventions leave empty. */
import type { AttributeValue, SpanKind, ToolCall } from '../span.types.js';
import { GEN_AI, MCP } from './attributes.js';
import { Ctx, isObject, isPresent, parseJsonish, subRows, toStr } from './mapping-context.js';

// ---------------------------------------------------------------------------------------------
// OpenTelemetry GenAI (also the fallback for OpenLLMetry, Langfuse and OpenInference fields left empty)
// ---------------------------------------------------------------------------------------------

export const GENAI_KIND: Record<string, SpanKind> = {
  chat: 'llm',
  text_completion: 'llm',
  generate_content: 'llm',
  completion: 'llm',
  embeddings: 'embedding',
  embedding: 'embedding',
  execute_tool: 'tool',
  invoke_agent: 'agent',
  create_agent: 'agent',
  retrieval: 'retriever',
  // Before semantic-conventions-genai v0.1.0: a workflow was its own operation; now `invoke_agent` (span kind internal).
  invoke_workflow: 'agent',
};

export const GENAI_EVENT_ROLE: Record<string, string> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
};

/** OpenLLMetry / old GenAI indexed prompt or completion rows -> messages (+ tool calls). */
export function indexedMessages(
  ctx: Ctx,
  field: string,
  prefix: string,
  calls?: ToolCall[],
): Array<Record<string, AttributeValue>> {
  const msgs: Array<Record<string, AttributeValue>> = [];
  for (const [, row] of ctx.indexed(prefix)) {
    const msg: Record<string, AttributeValue> = {};
    for (const rest of ['role', 'content', 'finish_reason', 'tool_call_id']) {
      const cell = row.get(rest);
      if (cell) {
        msg[rest] = rest === 'content' ? parseJsonish(cell.value) : cell.value;
        ctx.mark(field, cell.key);
      }
    }
    const rowCalls: ToolCall[] = [];
    for (const [, tc] of subRows(row, 'tool_calls')) {
      const name = tc.get('name');
      if (!name) continue;
      const args = tc.get('arguments');
      const id = tc.get('id');
      rowCalls.push({
        name: String(name.value),
        arguments: args ? parseJsonish(args.value) : null,
        id: id ? toStr(id.value) : null,
      });
      const keys = [name.key, ...(args ? [args.key] : []), ...(id ? [id.key] : [])];
      ctx.mark(field, ...keys);
      if (calls) ctx.mark('tool_calls', ...keys);
    }
    if (rowCalls.length > 0) {
      msg.tool_calls = rowCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
      calls?.push(...rowCalls);
    }
    if (Object.keys(msg).length > 0) msgs.push(msg);
  }
  return msgs;
}

/** Tool calls inside parsed gen_ai.output.messages: [{role, parts: [{type: 'tool_call', id, name, arguments}]}]. */
export function genaiPartsToolCalls(messages: AttributeValue): ToolCall[] {
  const calls: ToolCall[] = [];
  if (!Array.isArray(messages)) return calls;
  for (const m of messages) {
    if (!isObject(m) || !Array.isArray(m.parts)) continue;
    for (const p of m.parts) {
      if (isObject(p) && p.type === 'tool_call' && typeof p.name === 'string')
        calls.push({
          name: p.name,
          arguments: p.arguments !== undefined ? parseJsonish(p.arguments) : null,
          id: toStr(p.id),
        });
    }
  }
  return calls;
}

export function eventContent(attrs: Record<string, AttributeValue>): AttributeValue | undefined {
  for (const k of ['content', 'message.content', 'gen_ai.prompt', 'gen_ai.completion', 'body'])
    if (isPresent(attrs[k])) return parseJsonish(attrs[k]);
  if (isObject(attrs.message) && isPresent(attrs.message.content)) return attrs.message.content;
  return undefined;
}

/** The tool an MCP `tools/call` span calls: gen_ai.tool.name, else the target of its name (`tools/call get_weather`). */
function mcpToolName(ctx: Ctx): { name: string; key: string } | null {
  const named = toStr(ctx.attrs[GEN_AI.TOOL_NAME]);
  if (named !== null) return { name: named, key: GEN_AI.TOOL_NAME };
  const spanName = typeof ctx.span.name === 'string' ? ctx.span.name : '';
  const target = spanName.startsWith(`${MCP.TOOLS_CALL} `) ? spanName.slice(MCP.TOOLS_CALL.length).trim() : '';
  return target !== '' ? { name: target, key: '@span.name' } : null;
}

/** Where an MCP call went: the server's `host:port` on the client's span, the server's own service on its span. */
function mcpServer(ctx: Ctx): { server: string; keys: string[] } | null {
  const address = toStr(ctx.attrs[MCP.SERVER_ADDRESS]);
  if (ctx.span.otel_kind !== 'server' && address !== null) {
    const port = toStr(ctx.attrs[MCP.SERVER_PORT]);
    return port === null
      ? { server: address, keys: [MCP.SERVER_ADDRESS] }
      : { server: `${address}:${port}`, keys: [MCP.SERVER_ADDRESS, MCP.SERVER_PORT] };
  }
  const service = ctx.span.otel_kind === 'server' ? toStr(ctx.span.resource['service.name']) : null;
  return service === null ? null : { server: service, keys: [] };
}

/**
 * MCP (semantic-conventions-genai, MCP spans): a `tools/call` span, client's or server's, is a tool
 * call whether or not it also carries `gen_ai.operation.name: execute_tool`; other methods
 * (`initialize`, `tools/list`, `resources/read` ...) keep the span's own name and no kind.
 */
function mapMcp(ctx: Ctx): void {
  if (toStr(ctx.attrs[MCP.METHOD_NAME]) !== MCP.TOOLS_CALL) return;
  const tool = mcpToolName(ctx);
  if (tool === null) return;
  if (ctx.empty('kind')) {
    ctx.out.kind = 'tool';
    ctx.mark('kind', MCP.METHOD_NAME);
  }
  if (ctx.out.kind !== 'tool' || !ctx.empty('tool_calls')) return;
  const args = ctx.first([GEN_AI.TOOL_CALL_ARGUMENTS]);
  const id = ctx.first([GEN_AI.TOOL_CALL_ID, MCP.JSONRPC_REQUEST_ID]);
  const server = mcpServer(ctx);
  ctx.out.tool_calls.push({
    name: tool.name,
    arguments: args ? parseJsonish(args.value) : null,
    id: id ? toStr(id.value) : null,
    mcp_server: server?.server ?? null,
  });
  const keys = [
    tool.key,
    MCP.METHOD_NAME,
    ...(args ? [args.key] : []),
    ...(id ? [id.key] : []),
    ...(server?.keys ?? []),
  ];
  ctx.mark('tool_calls', ...keys);
  if (ctx.empty('name')) {
    ctx.out.name = tool.name;
    ctx.mark('name', tool.key);
  }
  if (ctx.empty('input') && args) {
    ctx.out.input = parseJsonish(args.value);
    ctx.mark('input', args.key);
  }
  ctx.setValue('output', GEN_AI.TOOL_CALL_RESULT, true);
}

/** `gen_ai.system_instructions` (given apart from the chat history) as the input's leading system message. */
function withSystemInstructions(ctx: Ctx): void {
  const instructions = ctx.first([GEN_AI.SYSTEM_INSTRUCTIONS]);
  if (instructions === null) return;
  const parts = parseJsonish(instructions.value);
  const system = { role: 'system', parts: Array.isArray(parts) ? parts : [{ type: 'text', content: parts }] };
  const input = ctx.out.input;
  ctx.out.input = Array.isArray(input)
    ? [system, ...input]
    : input === undefined || input === null
      ? [system]
      : [system, input];
  ctx.mark('input', instructions.key);
}

/** GenAI retrieval spans (`gen_ai.operation.name: retrieval`): the query and the documents, each `{id, score, content?}`. */
function mapRetrieval(ctx: Ctx): void {
  if (ctx.out.kind !== 'retriever') return;
  if (ctx.empty('input')) ctx.setValue('input', GEN_AI.RETRIEVAL_QUERY_TEXT, false);
  const docs = ctx.first([GEN_AI.RETRIEVAL_DOCUMENTS]);
  if (docs === null || !ctx.empty('retrieved_documents')) return;
  const parsed = parseJsonish(docs.value);
  if (!Array.isArray(parsed)) return;
  for (const d of parsed)
    if (isObject(d))
      ctx.out.retrieved_documents.push({
        id: toStr(d.id),
        content: typeof d.content === 'string' ? d.content : d.content === undefined ? null : JSON.stringify(d.content),
        score: typeof d.score === 'number' ? d.score : null,
        metadata: d.metadata ?? null,
      });
  ctx.mark('retrieved_documents', docs.key);
}

export function mapGenAi(ctx: Ctx): void {
  const a = ctx.attrs;
  ctx.setKind(GEN_AI.OPERATION_NAME, GENAI_KIND, (x) => x.toLowerCase());
  mapMcp(ctx);
  ctx.setComponentName([GEN_AI.AGENT_NAME, GEN_AI.WORKFLOW_NAME, GEN_AI.AGENT_ID], [GEN_AI.TOOL_NAME]);
  // The response model is what actually served the call; the request model is the fallback.
  ctx.setString('model', [GEN_AI.RESPONSE_MODEL, GEN_AI.REQUEST_MODEL]);
  ctx.setNumber('tokens_input', [GEN_AI.USAGE_INPUT_TOKENS, GEN_AI.USAGE_PROMPT_TOKENS]);
  ctx.setNumber('tokens_output', [GEN_AI.USAGE_OUTPUT_TOKENS, GEN_AI.USAGE_COMPLETION_TOKENS]);
  ctx.setNumber('tokens_total', [GEN_AI.USAGE_TOTAL_TOKENS]);
  ctx.setString('session_id', [GEN_AI.CONVERSATION_ID]);
  ctx.setString('user_id', [GEN_AI.USER_ID, GEN_AI.ENDUSER_ID]);

  ctx.setValue('input', GEN_AI.INPUT_MESSAGES, true);
  ctx.setValue('output', GEN_AI.OUTPUT_MESSAGES, true);
  mapRetrieval(ctx);
  if (ctx.out.tool_calls.length === 0 && ctx.used.get('output')?.has(GEN_AI.OUTPUT_MESSAGES)) {
    const calls = genaiPartsToolCalls(ctx.out.output ?? null);
    if (calls.length > 0) {
      ctx.out.tool_calls.push(...calls);
      ctx.mark('tool_calls', GEN_AI.OUTPUT_MESSAGES);
    }
  }
  if (ctx.empty('input')) {
    const msgs = indexedMessages(ctx, 'input', GEN_AI.PROMPT);
    if (msgs.length > 0) ctx.out.input = msgs;
  }
  if (ctx.empty('output')) {
    const calls: ToolCall[] = [];
    const msgs = indexedMessages(ctx, 'output', GEN_AI.COMPLETION, ctx.out.tool_calls.length === 0 ? calls : undefined);
    if (msgs.length > 0) ctx.out.output = msgs;
    ctx.out.tool_calls.push(...calls);
  }
  // Span events (older GenAI semconv) as the last input/output source.
  const evIn: AttributeValue[] = [];
  const evOut: AttributeValue[] = [];
  const evInNames = new Set<string>();
  const evOutNames = new Set<string>();
  ctx.span.events.forEach((e, i) => {
    const content = eventContent(e.attributes);
    const role = GENAI_EVENT_ROLE[e.name];
    if (ctx.empty('input') && (role || e.name === 'gen_ai.content.prompt')) {
      evIn.push(role ? { role: toStr(e.attributes.role) ?? role, content: content ?? null } : (content ?? null));
      evInNames.add(e.name);
      ctx.consumedEvents.add(i);
    } else if (ctx.empty('output') && (e.name === 'gen_ai.choice' || e.name === 'gen_ai.content.completion')) {
      const msg = isObject(e.attributes.message) ? e.attributes.message : null;
      evOut.push(
        e.name === 'gen_ai.choice'
          ? { role: toStr(msg?.role) ?? toStr(e.attributes['message.role']) ?? 'assistant', content: content ?? null }
          : (content ?? null),
      );
      evOutNames.add(e.name);
      ctx.consumedEvents.add(i);
    }
  });
  if (evIn.length > 0) {
    ctx.out.input = evIn;
    ctx.mark('input', ...[...evInNames].map((n) => `@event.${n}`));
  }
  if (evOut.length > 0) {
    ctx.out.output = evOut;
    ctx.mark('output', ...[...evOutNames].map((n) => `@event.${n}`));
  }
  // Only beside this convention's own input, never in front of another convention's.
  if (
    ctx.empty('input') ||
    [...(ctx.used.get('input') ?? [])].every((k) => k.startsWith('gen_ai.') || k.startsWith('@event.'))
  )
    withSystemInstructions(ctx);

  if (ctx.out.tool_calls.length === 0 && ctx.has(GEN_AI.TOOL_NAME)) {
    const args = ctx.first([GEN_AI.TOOL_CALL_ARGUMENTS]);
    const id = ctx.first([GEN_AI.TOOL_CALL_ID]);
    ctx.out.tool_calls.push({
      name: String(a[GEN_AI.TOOL_NAME]),
      arguments: args ? parseJsonish(args.value) : null,
      id: id ? toStr(id.value) : null,
    });
    ctx.mark('tool_calls', GEN_AI.TOOL_NAME, ...(args ? [args.key] : []), ...(id ? [id.key] : []));
    if (ctx.empty('input') && args) {
      ctx.out.input = parseJsonish(args.value);
      ctx.mark('input', args.key);
    }
    ctx.setValue('output', GEN_AI.TOOL_CALL_RESULT, true);
  }
  const modelKey = [...(ctx.used.get('model') ?? [])].find(
    (k) => k === GEN_AI.REQUEST_MODEL || k === GEN_AI.RESPONSE_MODEL,
  );
  if (ctx.empty('kind') && modelKey !== undefined) {
    // A span naming a model with no (known) operation is a model call (pre-1.27 instrumentations).
    // The evidence is the key the model field took, so no other key gets consumed by this inference.
    ctx.out.kind = 'llm';
    ctx.mark('kind', modelKey);
  }
  if (ctx.empty('error') && ctx.has(GEN_AI.ERROR_TYPE)) ctx.setString('error', [GEN_AI.ERROR_TYPE]);
}
