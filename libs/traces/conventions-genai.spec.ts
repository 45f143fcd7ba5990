import { describe, expect, it } from '@jest/globals';
import { keep, ok, span } from '../../test/utils/source-spans.js';
import { detectConventions, detectSpanConvention, normaliseSpan } from './conventions.js';

/** A source span with these members, mapped with per-span detection, keeping what no field takes. */
const mapped = (over: Parameters<typeof span>[0]) => ok(normaliseSpan(span(over), 'auto', keep));

// Attribute sets as the instrumentations write them under semantic-conventions-genai v0.1.0
// (structured messages with parts, invoke_agent for workflows too, retrieval) and the MCP conventions.

describe('normaliseSpan: GenAI as semantic-conventions-genai v0.1.0 states it', () => {
  it('maps an agent invocation with its id, conversation, system instructions and structured messages', () => {
    const r = mapped({
      name: 'invoke_agent travel-planner',
      otel_kind: 'internal',
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.provider.name': 'openai',
        'gen_ai.agent.name': 'travel-planner',
        'gen_ai.agent.id': 'asst_5j66UpCpwteGg4YSxUnt7lPY',
        'gen_ai.conversation.id': 'conv_42',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'You plan trips.' }]),
        'gen_ai.input.messages': JSON.stringify([
          { role: 'user', parts: [{ type: 'text', content: 'Weekend in Paris?' }] },
        ]),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [{ type: 'text', content: 'Go in May.' }], finish_reason: 'stop' },
        ]),
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 30,
      },
    });
    expect(r.span.convention).toBe('genai');
    expect(r.span.kind).toBe('agent');
    expect(r.span.name).toBe('travel-planner');
    expect(r.span.session_id).toBe('conv_42');
    expect(r.span.input).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'You plan trips.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'Weekend in Paris?' }] },
    ]);
    expect(r.used.input).toEqual(expect.arrayContaining(['gen_ai.input.messages', 'gen_ai.system_instructions']));
    expect(r.span.tokens_total).toBe(150);
    // The provider has no field of its own: kept verbatim, like the agent id the name did not need.
    expect(r.span.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.agent.id': 'asst_5j66UpCpwteGg4YSxUnt7lPY',
    });
  });

  it('reads the earlier names: invoke_workflow with gen_ai.workflow.name, gen_ai.system, indexed prompts', () => {
    const workflow = mapped({
      name: 'invoke_workflow booking',
      attributes: {
        'gen_ai.operation.name': 'invoke_workflow',
        'gen_ai.workflow.name': 'booking',
        'gen_ai.system': 'openai',
      },
    });
    expect(workflow.span).toMatchObject({ kind: 'agent', name: 'booking', convention: 'genai' });
    expect(workflow.used.name).toEqual(['gen_ai.workflow.name']);

    const chat = mapped({
      name: 'chat gpt-4o-mini',
      attributes: {
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': 'Hi',
        'gen_ai.completion.0.role': 'assistant',
        'gen_ai.completion.0.tool_calls.0.name': 'lookup',
        'gen_ai.completion.0.tool_calls.0.arguments': '{"q":"x"}',
        'gen_ai.usage.prompt_tokens': 5,
        'gen_ai.usage.completion_tokens': 2,
      },
    });
    expect(chat.span).toMatchObject({ kind: 'llm', model: 'gpt-4o-mini', tokens_input: 5, tokens_output: 2 });
    expect(chat.span.input).toEqual([{ role: 'user', content: 'Hi' }]);
    expect(chat.span.tool_calls).toEqual([{ name: 'lookup', arguments: { q: 'x' }, id: null }]);
    expect(chat.span.attributes['gen_ai.system']).toBe('openai');
  });

  it('maps the execute_tool span that runs a tool call: arguments in, result out', () => {
    const tool = mapped({
      name: 'execute_tool get_weather',
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get_weather',
        'gen_ai.tool.call.id': 'call_1',
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.arguments': '{"city":"Paris"}',
        'gen_ai.tool.call.result': '{"conditions":"sunny"}',
      },
    });
    expect(tool.span).toMatchObject({
      kind: 'tool',
      name: 'get_weather',
      input: { city: 'Paris' },
      output: { conditions: 'sunny' },
      tool_calls: [{ name: 'get_weather', arguments: { city: 'Paris' }, id: 'call_1' }],
    });
  });

  it('maps a retrieval span: query as input, documents with their scores', () => {
    const r = mapped({
      name: 'retrieval vs_abc',
      attributes: {
        'gen_ai.operation.name': 'retrieval',
        'gen_ai.data_source.id': 'vs_abc',
        'gen_ai.retrieval.query.text': 'refund policy',
        'gen_ai.retrieval.documents': JSON.stringify([
          { id: 'doc_1', score: 0.95 },
          { id: 'doc_2', score: 0.8, content: 'Refunds within 30 days' },
        ]),
      },
    });
    expect(r.span.kind).toBe('retriever');
    expect(r.span.input).toBe('refund policy');
    expect(r.span.retrieved_documents).toEqual([
      { id: 'doc_1', content: null, score: 0.95, metadata: null },
      { id: 'doc_2', content: 'Refunds within 30 days', score: 0.8, metadata: null },
    ]);
  });
});

describe('normaliseSpan: MCP spans', () => {
  // As an MCP client instrumentation writes a tool call over Streamable HTTP.
  const clientCall = () =>
    span({
      name: 'tools/call get_weather',
      otel_kind: 'client',
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'get_weather',
        'gen_ai.operation.name': 'execute_tool',
        'jsonrpc.request.id': '7',
        'mcp.session.id': '191c4850af6c49e08843a3f6c80e5046',
        'mcp.protocol.version': '2025-06-18',
        'network.transport': 'tcp',
        'server.address': 'weather.internal',
        'server.port': 8080,
        'gen_ai.tool.call.arguments': '{"location":"Paris"}',
        'gen_ai.tool.call.result': '{"conditions":"rainy"}',
      },
    });

  it('recognises an MCP span as GenAI, even without any gen_ai attribute', () => {
    expect(detectSpanConvention(clientCall())).toBe('genai');
    expect(detectSpanConvention(span({ name: 'initialize', attributes: { 'mcp.method.name': 'initialize' } }))).toBe(
      'genai',
    );
  });

  it('maps a client tools/call as a tool call with its name, arguments, result and MCP server', () => {
    const r = ok(normaliseSpan(clientCall(), 'auto', keep));
    expect(r.span).toMatchObject({
      kind: 'tool',
      name: 'get_weather',
      input: { location: 'Paris' },
      output: { conditions: 'rainy' },
      tool_calls: [
        { name: 'get_weather', arguments: { location: 'Paris' }, id: '7', mcp_server: 'weather.internal:8080' },
      ],
    });
    // The MCP session is not the user's conversation: kept, not taken as the span's session.
    expect(r.span.session_id).toBeNull();
    expect(r.span.attributes['mcp.session.id']).toBe('191c4850af6c49e08843a3f6c80e5046');
  });

  it('names the tool from the span name when gen_ai.tool.name is absent, and the server by its service on the server side', () => {
    const r = mapped({
      name: 'tools/call lookup_order',
      otel_kind: 'server',
      resource: { 'service.name': 'orders-mcp' },
      attributes: { 'mcp.method.name': 'tools/call', 'network.transport': 'pipe' },
    });
    expect(r.span.convention).toBe('genai');
    expect(r.span.kind).toBe('tool');
    expect(r.span.name).toBe('lookup_order');
    expect(r.span.tool_calls).toEqual([{ name: 'lookup_order', arguments: null, id: null, mcp_server: 'orders-mcp' }]);
  });

  it('leaves other MCP methods as they are: no kind, their own name', () => {
    for (const method of ['initialize', 'tools/list', 'resources/read']) {
      const r = mapped({ name: method, attributes: { 'mcp.method.name': method } });
      expect(r.span).toMatchObject({ kind: 'unknown', name: method, tool_calls: [] });
      expect(r.span.attributes['mcp.method.name']).toBe(method);
    }
  });

  it('reports the MCP attributes a tool call takes in the detection', () => {
    const report = detectConventions([clientCall(), clientCall()]);
    expect(report.convention).toBe('genai');
    const toolCalls = report.field_mappings.find((m) => m.field === 'tool_calls')!;
    expect(toolCalls.source_attributes).toEqual(
      expect.arrayContaining(['gen_ai.tool.name', 'mcp.method.name', 'server.address', 'server.port']),
    );
    expect(toolCalls.coverage).toBe(1);
  });
});
