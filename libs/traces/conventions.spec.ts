import { describe, expect, it } from '@jest/globals';
import { detectConventions, detectSpanConvention, foldKey, normaliseSpan, REPORTED_FIELDS } from './conventions.js';
import type { NormaliseResult } from './conventions.js';
import type { CanonicalSpan, SourceSpan } from './span.types.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const START = '1700000000000000000'; // 2023-11-14T22:13:20.000Z
const END = '1700000001234567891'; // +1234.567891 ms

let ref = 0;
function span(over: Partial<SourceSpan> & { attributes?: SourceSpan['attributes'] }): SourceSpan {
  ref++;
  return {
    trace_id: TRACE,
    span_id: `00f067aa0ba902b${ref % 10}`,
    parent_span_id: null,
    name: 'span',
    otel_kind: 'internal',
    start_time_unix_nano: START,
    end_time_unix_nano: END,
    status_code: 'unset',
    status_message: '',
    attributes: {},
    resource: { 'service.name': 'agent-api', 'telemetry.sdk.language': 'python' },
    scope: { name: 'test-scope', version: '1.0.0' },
    events: [],
    source_ref: `line ${ref}`,
    ...over,
  };
}

function ok(r: NormaliseResult): Extract<NormaliseResult, { ok: true }> {
  if (!r.ok) throw new Error(`expected ok, got drop ${r.drop.reason}: ${r.drop.detail}`);
  return r;
}

const keep = { keepUnmapped: true };

// As openinference-instrumentation-openai emits a chat completion with a tool call.
const oiLlm = (): SourceSpan =>
  span({
    name: 'ChatCompletion',
    otel_kind: 'internal',
    scope: { name: 'openinference.instrumentation.openai', version: '0.1.30' },
    attributes: {
      'openinference.span.kind': 'LLM',
      'llm.provider': 'openai',
      'llm.system': 'openai',
      'llm.model_name': 'gpt-4o-mini-2024-07-18',
      'llm.invocation_parameters': '{"model": "gpt-4o-mini", "temperature": 0}',
      'input.value': '{"messages": [{"role": "user", "content": "Weather in Paris?"}], "model": "gpt-4o-mini"}',
      'input.mime_type': 'application/json',
      'output.value': '{"id": "chatcmpl-1", "choices": [{"finish_reason": "tool_calls"}]}',
      'output.mime_type': 'application/json',
      'llm.input_messages.0.message.role': 'system',
      'llm.input_messages.0.message.content': 'You are helpful.',
      'llm.input_messages.1.message.role': 'user',
      'llm.input_messages.1.message.content': 'Weather in Paris?',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'call_abc',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city": "Paris"}',
      'llm.output_messages.0.message.tool_calls.1.tool_call.id': 'call_def',
      'llm.output_messages.0.message.tool_calls.1.tool_call.function.name': 'get_time',
      'llm.output_messages.0.message.tool_calls.1.tool_call.function.arguments': '{"tz": "CET"}',
      'llm.token_count.prompt': 120,
      'llm.token_count.completion': 30,
      'llm.token_count.total': 150,
      'llm.cost.total': 0.0012,
      'session.id': 'sess-1',
      'user.id': 'user-9',
    },
  });

describe('detectSpanConvention', () => {
  it('recognises each convention by its markers', () => {
    expect(detectSpanConvention(oiLlm())).toBe('openinference');
    expect(detectSpanConvention(span({ attributes: { 'gen_ai.operation.name': 'chat' } }))).toBe('genai');
    expect(detectSpanConvention(span({ attributes: { 'llm.request.type': 'chat', 'gen_ai.request.model': 'gpt-4o' } }))).toBe('openllmetry');
    expect(detectSpanConvention(span({ attributes: { 'langfuse.observation.type': 'generation' } }))).toBe('langfuse');
    expect(detectSpanConvention(span({ attributes: { 'http.request.method': 'GET' } }))).toBe('plain_otel');
    expect(detectSpanConvention(span({ events: [{ name: 'gen_ai.user.message', time_unix_nano: START, attributes: { content: 'hi' } }] }))).toBe('genai');
  });

  it('prefers the most specific convention when several match', () => {
    expect(detectSpanConvention(span({ attributes: { 'openinference.span.kind': 'LLM', 'langfuse.observation.type': 'generation', 'gen_ai.system': 'openai' } }))).toBe('openinference');
    expect(detectSpanConvention(span({ attributes: { 'langfuse.observation.type': 'generation', 'traceloop.span.kind': 'task', 'gen_ai.system': 'openai' } }))).toBe('langfuse');
    expect(detectSpanConvention(span({ attributes: { 'traceloop.span.kind': 'task', 'gen_ai.system': 'openai' } }))).toBe('openllmetry');
  });
});

describe('normaliseSpan: openinference', () => {
  it('maps an LLM span with JSON input/output, tokens, cost and flattened tool calls', () => {
    const r = ok(normaliseSpan(oiLlm(), 'auto', keep));
    const s = r.span;
    expect(s.convention).toBe('openinference');
    expect(s.kind).toBe('llm');
    expect(s.name).toBe('ChatCompletion');
    expect(s.input).toEqual({ messages: [{ role: 'user', content: 'Weather in Paris?' }], model: 'gpt-4o-mini' });
    expect(s.output).toEqual({ id: 'chatcmpl-1', choices: [{ finish_reason: 'tool_calls' }] });
    expect(s.model).toBe('gpt-4o-mini-2024-07-18');
    expect([s.tokens_input, s.tokens_output, s.tokens_total]).toEqual([120, 30, 150]);
    expect(s.cost).toBe(0.0012);
    expect(s.session_id).toBe('sess-1');
    expect(s.user_id).toBe('user-9');
    expect(s.service_name).toBe('agent-api');
    expect(s.tool_calls).toEqual([
      { name: 'get_weather', arguments: { city: 'Paris' }, id: 'call_abc' },
      { name: 'get_time', arguments: { tz: 'CET' }, id: 'call_def' },
    ]);
    expect(s.retrieved_documents).toEqual([]);
    expect(s.status).toBe('unset');
    expect(s.error).toBeNull();
    expect(s.start_time).toBe('2023-11-14T22:13:20.000Z');
    expect(s.end_time).toBe('2023-11-14T22:13:21.234Z');
    expect(s.duration_ms).toBe(1234.568);

    expect(r.used.input).toEqual(['input.value', 'input.mime_type']);
    expect(r.used.tool_calls).toHaveLength(6);
    expect(r.used.service_name).toEqual(['resource.service.name']);
    expect(r.used.name).toEqual(['@span.name']);
    // input.value was present, so the indexed input messages are not used, and are kept verbatim.
    expect(r.unmapped.sort()).toEqual(
      [
        'llm.provider',
        'llm.system',
        'llm.invocation_parameters',
        'llm.input_messages.0.message.role',
        'llm.input_messages.0.message.content',
        'llm.input_messages.1.message.role',
        'llm.input_messages.1.message.content',
        'llm.output_messages.0.message.role',
        'resource.telemetry.sdk.language',
        'otel.scope.name',
        'otel.scope.version',
      ].sort(),
    );
    expect(r.dropped).toEqual([]);
    expect(s.attributes['llm.input_messages.1.message.content']).toBe('Weather in Paris?');
    expect(s.attributes['resource.telemetry.sdk.language']).toBe('python');
    expect(s.attributes['otel.scope.name']).toBe('openinference.instrumentation.openai');
    // Nothing a field took is also kept.
    expect(s.attributes['llm.token_count.prompt']).toBeUndefined();
  });

  it('drops every unmapped attribute when keepUnmapped is false', () => {
    const r = ok(normaliseSpan(oiLlm(), 'auto', { keepUnmapped: false }));
    expect(r.span.attributes).toEqual({});
    expect(r.dropped.sort()).toEqual([...r.unmapped].sort());
    expect(r.dropped).toContain('llm.invocation_parameters');
  });

  it('drops only the oversize unmapped values beyond maxAttributeBytes', () => {
    const big = span({ attributes: { 'openinference.span.kind': 'CHAIN', 'metadata': 'x'.repeat(100), 'tag.tags': ['a'] } });
    const r = ok(normaliseSpan(big, 'auto', { keepUnmapped: true, maxAttributeBytes: 50 }));
    expect(r.dropped).toEqual(['metadata']);
    expect(r.span.attributes['tag.tags']).toEqual(['a']);
    expect(r.span.attributes.metadata).toBeUndefined();
  });

  it('builds input from llm.input_messages when input.value is absent', () => {
    const r = ok(
      normaliseSpan(
        span({
          attributes: {
            'openinference.span.kind': 'LLM',
            'llm.input_messages.0.message.role': 'system',
            'llm.input_messages.0.message.content': 'Be brief.',
            'llm.input_messages.1.message.role': 'user',
            'llm.input_messages.1.message.contents.0.message_content.type': 'text',
            'llm.input_messages.1.message.contents.0.message_content.text': 'Describe this',
            'llm.input_messages.1.message.contents.1.message_content.type': 'image',
            'llm.input_messages.1.message.contents.1.message_content.image.image.url': 'https://x/img.png',
            'llm.output_messages.0.message.role': 'assistant',
            'llm.output_messages.0.message.content': 'A cat.',
          },
        }),
        'openinference',
        keep,
      ),
    );
    expect(r.span.input).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Describe this' }] },
    ]);
    expect(r.span.output).toEqual([{ role: 'assistant', content: 'A cat.' }]);
    // The image part is not translated, so it stays (kept), not silently lost.
    expect(r.unmapped.sort()).toEqual(
      ['llm.input_messages.1.message.contents.1.message_content.image.image.url', 'llm.input_messages.1.message.contents.1.message_content.type', 'otel.scope.name', 'otel.scope.version', 'resource.telemetry.sdk.language'].sort(),
    );
  });

  it('maps retriever documents and a tool span', () => {
    const ret = ok(
      normaliseSpan(
        span({
          name: 'VectorStoreRetriever',
          attributes: {
            'openinference.span.kind': 'RETRIEVER',
            'input.value': 'refund policy',
            'retrieval.documents.0.document.id': 'doc-1',
            'retrieval.documents.0.document.content': 'Refunds within 30 days.',
            'retrieval.documents.0.document.score': 0.91,
            'retrieval.documents.0.document.metadata': '{"source": "policy.md"}',
            'retrieval.documents.1.document.content': 'Shipping takes 5 days.',
            'retrieval.documents.1.document.score': '0.42',
          },
        }),
        'auto',
        keep,
      ),
    );
    expect(ret.span.kind).toBe('retriever');
    expect(ret.span.input).toBe('refund policy');
    expect(ret.span.retrieved_documents).toEqual([
      { id: 'doc-1', content: 'Refunds within 30 days.', score: 0.91, metadata: { source: 'policy.md' } },
      { id: null, content: 'Shipping takes 5 days.', score: 0.42, metadata: null },
    ]);
    expect(ret.used.retrieved_documents).toHaveLength(6);

    const tool = ok(
      normaliseSpan(
        span({
          name: 'get_weather',
          attributes: {
            'openinference.span.kind': 'TOOL',
            'tool.name': 'get_weather',
            'tool.description': 'Weather by city',
            'tool.parameters': '{"type": "object", "properties": {"city": {"type": "string"}}}',
            'input.value': '{"city": "Paris"}',
            'input.mime_type': 'application/json',
            'output.value': 'sunny',
          },
        }),
        'auto',
        keep,
      ),
    );
    expect(tool.span.kind).toBe('tool');
    expect(tool.span.tool_calls).toEqual([{ name: 'get_weather', arguments: { city: 'Paris' }, id: null }]);
    expect(tool.span.output).toBe('sunny');
    // The parameter schema is not the call's arguments; it is kept, not consumed.
    expect(tool.unmapped).toEqual(expect.arrayContaining(['tool.parameters', 'tool.description']));
  });

  it('marks errors from OTLP status and from exception events', () => {
    const otlp = ok(normaliseSpan(span({ status_code: 'error', status_message: 'rate limited', attributes: { 'openinference.span.kind': 'LLM' } }), 'auto', keep));
    expect([otlp.span.status, otlp.span.error]).toEqual(['error', 'rate limited']);
    expect(otlp.used.error).toEqual(['@span.status']);

    const exc = ok(
      normaliseSpan(
        span({
          attributes: { 'openinference.span.kind': 'TOOL', 'tool.name': 'search' },
          events: [{ name: 'exception', time_unix_nano: START, attributes: { 'exception.type': 'ValueError', 'exception.message': 'boom', 'exception.stacktrace': 'Traceback...' } }],
        }),
        'auto',
        keep,
      ),
    );
    expect([exc.span.status, exc.span.error]).toEqual(['error', 'ValueError: boom']);
    expect(exc.used.status).toEqual(['@event.exception']);
    // The stacktrace has no field: the event is kept.
    expect(exc.span.attributes['span.events']).toEqual([{ name: 'exception', time_unix_nano: START, attributes: { 'exception.type': 'ValueError', 'exception.message': 'boom', 'exception.stacktrace': 'Traceback...' } }]);

    const fine = ok(normaliseSpan(span({ status_code: 'ok', attributes: { 'openinference.span.kind': 'CHAIN' } }), 'auto', keep));
    expect([fine.span.status, fine.span.error, fine.span.kind]).toEqual(['ok', null, 'chain']);
  });
});

describe('normaliseSpan: genai', () => {
  it('maps a chat span of the current GenAI conventions', () => {
    const r = ok(
      normaliseSpan(
        span({
          name: 'chat gpt-4o',
          otel_kind: 'client',
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.provider.name': 'openai',
            'gen_ai.request.model': 'gpt-4o',
            'gen_ai.response.model': 'gpt-4o-2024-08-06',
            'gen_ai.response.id': 'chatcmpl-9',
            'gen_ai.response.finish_reasons': ['tool_calls'],
            'gen_ai.usage.input_tokens': 100,
            'gen_ai.usage.output_tokens': 20,
            'gen_ai.conversation.id': 'conv-7',
            'gen_ai.input.messages': '[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]',
            'gen_ai.output.messages': '[{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"get_weather","arguments":{"city":"Paris"}}],"finish_reason":"tool_call"}]',
            'server.address': 'api.openai.com',
          },
        }),
        'auto',
        keep,
      ),
    );
    const s = r.span;
    expect(s.convention).toBe('genai');
    expect(s.kind).toBe('llm');
    expect(s.model).toBe('gpt-4o-2024-08-06');
    expect([s.tokens_input, s.tokens_output, s.tokens_total]).toEqual([100, 20, 120]);
    expect(r.used.tokens_total).toEqual(['gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens']);
    expect(s.session_id).toBe('conv-7');
    expect(s.user_id).toBeNull();
    expect(s.cost).toBeNull();
    expect(s.input).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] }]);
    expect(s.tool_calls).toEqual([{ name: 'get_weather', arguments: { city: 'Paris' }, id: 'call_1' }]);
    expect(r.unmapped.sort()).toEqual(
      ['gen_ai.provider.name', 'gen_ai.request.model', 'gen_ai.response.id', 'gen_ai.response.finish_reasons', 'server.address', 'otel.scope.name', 'otel.scope.version', 'resource.telemetry.sdk.language'].sort(),
    );
  });

  it('maps the older prompt/completion token names and message events', () => {
    const r = ok(
      normaliseSpan(
        span({
          name: 'chat',
          attributes: { 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.usage.prompt_tokens': 11, 'gen_ai.usage.completion_tokens': 7 },
          events: [
            { name: 'gen_ai.system.message', time_unix_nano: START, attributes: { content: 'Be brief.' } },
            { name: 'gen_ai.user.message', time_unix_nano: START, attributes: { content: 'Hi' } },
            { name: 'gen_ai.choice', time_unix_nano: END, attributes: { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Hello!' } } },
            { name: 'custom.event', time_unix_nano: END, attributes: { a: 1 } },
          ],
        }),
        'auto',
        keep,
      ),
    );
    const s = r.span;
    expect(s.kind).toBe('llm');
    expect(s.model).toBe('gpt-4o-mini');
    expect([s.tokens_input, s.tokens_output, s.tokens_total]).toEqual([11, 7, 18]);
    expect(s.input).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(s.output).toEqual([{ role: 'assistant', content: 'Hello!' }]);
    expect(r.used.input).toEqual(['@event.gen_ai.system.message', '@event.gen_ai.user.message']);
    expect(s.attributes['span.events']).toEqual([{ name: 'custom.event', time_unix_nano: END, attributes: { a: 1 } }]);
  });

  it('maps execute_tool spans and error.type', () => {
    const r = ok(
      normaliseSpan(
        span({
          name: 'execute_tool get_weather',
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': 'get_weather',
            'gen_ai.tool.call.id': 'call_1',
            'gen_ai.tool.call.arguments': '{"city":"Paris"}',
            'error.type': 'TimeoutError',
          },
        }),
        'auto',
        keep,
      ),
    );
    expect(r.span.kind).toBe('tool');
    expect(r.span.tool_calls).toEqual([{ name: 'get_weather', arguments: { city: 'Paris' }, id: 'call_1' }]);
    expect(r.span.input).toEqual({ city: 'Paris' });
    expect([r.span.status, r.span.error]).toEqual(['error', 'TimeoutError']);
    expect(r.used.status).toEqual(['error.type']);

    // With an OTLP status message, that message wins and error.type stays as a kept attribute.
    const r2 = ok(normaliseSpan(span({ status_code: 'error', status_message: 'timed out after 30s', attributes: { 'gen_ai.operation.name': 'execute_tool', 'error.type': 'TimeoutError' } }), 'auto', keep));
    expect(r2.span.error).toBe('timed out after 30s');
    expect(r2.span.attributes['error.type']).toBe('TimeoutError');
  });

  it('maps agent operations', () => {
    const r = ok(normaliseSpan(span({ name: 'invoke_agent Planner', attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'Planner' } }), 'auto', keep));
    expect(r.span.kind).toBe('agent');
  });
});

describe('normaliseSpan: openllmetry', () => {
  it('maps a workflow span and an LLM span as Traceloop emits them', () => {
    const wf = ok(
      normaliseSpan(
        span({
          name: 'joke_workflow.workflow',
          attributes: {
            'traceloop.span.kind': 'workflow',
            'traceloop.entity.name': 'joke_workflow',
            'traceloop.workflow.name': 'joke_workflow',
            'traceloop.entity.input': '{"args": [], "kwargs": {"topic": "cats"}}',
            'traceloop.entity.output': '"Why did the cat..."',
            'traceloop.association.properties.session_id': 'sess-42',
            'traceloop.association.properties.user_id': 'alice',
          },
        }),
        'auto',
        keep,
      ),
    );
    expect(wf.span.convention).toBe('openllmetry');
    expect(wf.span.kind).toBe('chain');
    expect(wf.span.name).toBe('joke_workflow');
    expect(wf.used.name).toEqual(['traceloop.entity.name']);
    expect(wf.span.input).toEqual({ args: [], kwargs: { topic: 'cats' } });
    expect(wf.span.output).toBe('Why did the cat...');
    expect(wf.span.session_id).toBe('sess-42');
    expect(wf.span.user_id).toBe('alice');
    expect(wf.span.attributes['traceloop.workflow.name']).toBe('joke_workflow');

    const llm = ok(
      normaliseSpan(
        span({
          name: 'openai.chat',
          otel_kind: 'client',
          attributes: {
            'llm.request.type': 'chat',
            'gen_ai.system': 'OpenAI',
            'gen_ai.request.model': 'gpt-4o-mini',
            'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
            'gen_ai.prompt.0.role': 'user',
            'gen_ai.prompt.0.content': 'Tell a joke about cats',
            'gen_ai.completion.0.role': 'assistant',
            'gen_ai.completion.0.finish_reason': 'tool_calls',
            'gen_ai.completion.0.tool_calls.0.id': 'call_1',
            'gen_ai.completion.0.tool_calls.0.name': 'search',
            'gen_ai.completion.0.tool_calls.0.arguments': '{"q": "cat jokes"}',
            'gen_ai.usage.prompt_tokens': 10,
            'gen_ai.usage.completion_tokens': 5,
            'llm.usage.total_tokens': 15,
            'llm.is_streaming': false,
            'traceloop.workflow.name': 'joke_workflow',
          },
        }),
        'auto',
        keep,
      ),
    );
    const s = llm.span;
    expect(s.convention).toBe('openllmetry');
    expect(s.kind).toBe('llm');
    expect(s.name).toBe('openai.chat');
    expect(s.model).toBe('gpt-4o-mini-2024-07-18');
    expect([s.tokens_input, s.tokens_output, s.tokens_total]).toEqual([10, 5, 15]);
    expect(llm.used.tokens_total).toEqual(['llm.usage.total_tokens']);
    expect(s.input).toEqual([{ role: 'user', content: 'Tell a joke about cats' }]);
    expect(s.output).toEqual([{ role: 'assistant', finish_reason: 'tool_calls', tool_calls: [{ id: 'call_1', name: 'search', arguments: { q: 'cat jokes' } }] }]);
    expect(s.tool_calls).toEqual([{ name: 'search', arguments: { q: 'cat jokes' }, id: 'call_1' }]);
    expect(llm.unmapped.sort()).toEqual(['gen_ai.request.model', 'gen_ai.system', 'llm.is_streaming', 'otel.scope.name', 'otel.scope.version', 'resource.telemetry.sdk.language', 'traceloop.workflow.name'].sort());
  });
});

describe('normaliseSpan: langfuse', () => {
  it('maps a generation with usage and cost details, and level ERROR', () => {
    const r = ok(
      normaliseSpan(
        span({
          name: 'summarise',
          scope: { name: 'langfuse-sdk', version: '3.2.1' },
          status_code: 'unset',
          attributes: {
            'langfuse.observation.type': 'generation',
            'langfuse.observation.input': '[{"role": "user", "content": "Summarise this"}]',
            'langfuse.observation.output': '{"role": "assistant", "content": "Short."}',
            'langfuse.observation.model.name': 'claude-3-5-haiku-20241022',
            'langfuse.observation.model.parameters': '{"max_tokens": 100}',
            'langfuse.observation.usage_details': '{"input": 50, "output": 10, "total": 60}',
            'langfuse.observation.cost_details': '{"input": 0.00004, "output": 0.00004}',
            'langfuse.observation.level': 'ERROR',
            'langfuse.observation.status_message': 'content filter triggered',
            'langfuse.session.id': 'sess-lf',
            'langfuse.user.id': 'bob',
            'langfuse.trace.name': 'summary-pipeline',
          },
        }),
        'auto',
        keep,
      ),
    );
    const s = r.span;
    expect(s.convention).toBe('langfuse');
    expect(s.kind).toBe('llm');
    expect(s.input).toEqual([{ role: 'user', content: 'Summarise this' }]);
    expect(s.output).toEqual({ role: 'assistant', content: 'Short.' });
    expect(s.model).toBe('claude-3-5-haiku-20241022');
    expect([s.tokens_input, s.tokens_output, s.tokens_total]).toEqual([50, 10, 60]);
    expect(s.cost).toBeCloseTo(0.00008, 12);
    expect(s.session_id).toBe('sess-lf');
    expect(s.user_id).toBe('bob');
    expect([s.status, s.error]).toEqual(['error', 'content filter triggered']);
    expect(r.used.status).toEqual(['langfuse.observation.level']);
    expect(r.unmapped.sort()).toEqual(['langfuse.observation.model.parameters', 'langfuse.trace.name', 'otel.scope.name', 'otel.scope.version', 'resource.telemetry.sdk.language'].sort());
  });

  it('reads the session.id / user.id the Langfuse v3 SDK writes, and maps tool observations', () => {
    const r = ok(normaliseSpan(span({ name: 'lookup_order', attributes: { 'langfuse.observation.type': 'tool', 'langfuse.observation.input': '{"order": 7}', 'session.id': 's-3', 'user.id': 'u-3' } }), 'auto', keep));
    expect([r.span.kind, r.span.session_id, r.span.user_id]).toEqual(['tool', 's-3', 'u-3']);
    expect(r.span.tool_calls).toEqual([{ name: 'lookup_order', arguments: { order: 7 }, id: null }]);
    expect(r.span.status).toBe('unset');
  });
});

describe('normaliseSpan: values the mapping does not know are kept, not consumed', () => {
  it('leaves an unknown kind marker in attributes', () => {
    const oi = ok(normaliseSpan(span({ attributes: { 'openinference.span.kind': 'PLANNER' } }), 'auto', keep));
    expect([oi.span.kind, oi.span.attributes['openinference.span.kind'], oi.used.kind]).toEqual(['unknown', 'PLANNER', undefined]);
    const lf = ok(normaliseSpan(span({ attributes: { 'langfuse.observation.type': 'event' } }), 'auto', keep));
    expect([lf.span.kind, lf.span.attributes['langfuse.observation.type']]).toEqual(['unknown', 'event']);
  });

  it('infers llm kind from the model without consuming the request model', () => {
    const r = ok(normaliseSpan(span({ attributes: { 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.response.model': 'gpt-4o-2024-08-06' } }), 'auto', keep));
    expect([r.span.kind, r.span.model, r.used.kind]).toEqual(['llm', 'gpt-4o-2024-08-06', ['gen_ai.response.model']]);
    expect(r.span.attributes['gen_ai.request.model']).toBe('gpt-4o');
  });
});

describe('normaliseSpan: key clashes', () => {
  it('reports a resource attribute that clashes with a span attribute key as dropped', () => {
    const r = ok(normaliseSpan(span({ attributes: { 'resource.region': 'span-level' }, resource: { region: 'eu-west-1' } }), 'auto', keep));
    expect(r.span.attributes['resource.region']).toBe('span-level');
    expect(r.dropped).toEqual(['resource.region']);
    expect(r.unmapped.filter((k) => k === 'resource.region')).toHaveLength(2);
  });
});

describe('normaliseSpan: plain_otel', () => {
  it('keeps name, status, times and resource; kind unknown', () => {
    const r = ok(normaliseSpan(span({ name: 'GET /orders', otel_kind: 'server', status_code: 'ok', attributes: { 'http.request.method': 'GET', 'http.response.status_code': 200 } }), 'auto', keep));
    const s: CanonicalSpan = r.span;
    expect(s.convention).toBe('plain_otel');
    expect([s.kind, s.name, s.status, s.service_name, s.model, s.input]).toEqual(['unknown', 'GET /orders', 'ok', 'agent-api', null, null]);
    expect(s.attributes['http.response.status_code']).toBe(200);
  });
});

describe('normaliseSpan: drops and ids', () => {
  const reason = (over: Partial<SourceSpan>, opts = keep): string => {
    const r = normaliseSpan(span(over), 'auto', opts);
    return r.ok ? 'ok' : r.drop.reason;
  };

  it('drops each invalid record with its reason and never throws', () => {
    expect(reason({ trace_id: '' })).toBe('missing_trace_id');
    expect(reason({ trace_id: '   ' })).toBe('missing_trace_id');
    expect(reason({ span_id: '' })).toBe('missing_span_id');
    expect(reason({ trace_id: '4bf92f3577b34da6a3ce929d0e0e473' })).toBe('invalid_id'); // 31 hex
    expect(reason({ trace_id: '0'.repeat(32) })).toBe('invalid_id');
    expect(reason({ span_id: '00f067aa0ba902b7aa' })).toBe('invalid_id'); // 18 hex
    expect(reason({ start_time_unix_nano: null })).toBe('missing_timestamps');
    expect(reason({ end_time_unix_nano: '0' })).toBe('missing_timestamps');
    expect(reason({ start_time_unix_nano: '2023-11-14' })).toBe('missing_timestamps');
    expect(reason({ start_time_unix_nano: END, end_time_unix_nano: START })).toBe('end_before_start');
    expect(reason({ attributes: { big: 'x'.repeat(2000) } }, { keepUnmapped: true, maxRecordBytes: 1000 } as typeof keep)).toBe('record_too_large');
    expect(reason({ attributes: null as unknown as SourceSpan['attributes'] })).toBe('malformed_record');
  });

  it('keeps the drop payload and source_ref', () => {
    const s = span({ trace_id: '' });
    const r = normaliseSpan(s, 'auto', keep);
    expect(r.ok).toBe(false);
    if (!r.ok) expect([r.drop.source_ref, r.drop.payload]).toEqual([s.source_ref, s]);
  });

  it('accepts non-OTLP ids verbatim and lower-cases OTLP hex ids', () => {
    const uuid = ok(normaliseSpan(span({ trace_id: '9f3c2a1e-7b4d-4e8a-9c1f-2d3e4f5a6b7c', span_id: 'run-42', parent_span_id: 'run-41' }), 'auto', keep)).span;
    expect([uuid.trace_id, uuid.span_id, uuid.parent_span_id]).toEqual(['9f3c2a1e-7b4d-4e8a-9c1f-2d3e4f5a6b7c', 'run-42', 'run-41']);
    const short = ok(normaliseSpan(span({ trace_id: '12345', span_id: '17' }), 'auto', keep)).span;
    expect([short.trace_id, short.span_id]).toEqual(['12345', '17']);
    const upper = ok(normaliseSpan(span({ trace_id: TRACE.toUpperCase(), parent_span_id: '0000000000000000' }), 'auto', keep)).span;
    expect([upper.trace_id, upper.parent_span_id]).toEqual([TRACE, null]);
  });

  it('converts nanoseconds beyond 2^53 exactly and rounds the duration to microseconds', () => {
    const s = ok(normaliseSpan(span({ start_time_unix_nano: '1700000000123456789', end_time_unix_nano: '1700000000123457289' }), 'auto', keep)).span;
    expect(s.start_time).toBe('2023-11-14T22:13:20.123Z');
    expect(s.duration_ms).toBe(0.001); // 500 ns rounds half up to 1 µs
  });
});

describe('detectConventions', () => {
  const mixed = (): SourceSpan[] => [
    oiLlm(),
    span({ name: 'agent', attributes: { 'openinference.span.kind': 'AGENT', 'input.value': 'hi', 'session.id': 's1' } }),
    span({ name: 'search', attributes: { 'openinference.span.kind': 'TOOL', 'tool.name': 'search', 'input.value': '{"q":1}', 'session.id': 's1' } }),
    span({ name: 'chat', attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' } }),
    span({ name: 'GET /x', attributes: { 'http.request.method': 'GET' } }),
    span({ name: 'SELECT', attributes: { 'db.system': 'postgresql' } }),
    span({ trace_id: '', source_ref: 'line 900' }),
    span({ start_time_unix_nano: null, source_ref: 'line 901' }),
    span({ start_time_unix_nano: null, source_ref: 'line 902' }),
  ];

  it('picks the convention with most marked spans and reports confidence and candidates', () => {
    const d = detectConventions(mixed());
    expect(d.convention).toBe('openinference');
    expect(d.span_count).toBe(9);
    expect(d.sampled).toBe(9);
    // Candidates share the whole sample (invalid spans carry no markers: plain_otel); confidence = 3 of the 4 marked spans.
    expect(d.candidates).toEqual([
      { convention: 'plain_otel', spans: 5, confidence: 0.556 },
      { convention: 'openinference', spans: 3, confidence: 0.333 },
      { convention: 'genai', spans: 1, confidence: 0.111 },
    ]);
    expect(d.confidence).toBe(0.75);
    expect(d.dropped_records).toEqual([
      { reason: 'missing_timestamps', count: 2, example_source_ref: 'line 901' },
      { reason: 'missing_trace_id', count: 1, example_source_ref: 'line 900' },
    ]);
    expect(d.warnings).toEqual(expect.arrayContaining(['mixed conventions: openinference (3 spans), genai (1 spans)', '3 of 9 records cannot be landed (missing_timestamps: 2, missing_trace_id: 1)']));
  });

  it('reports every canonical field, with source attributes and coverage', () => {
    const d = detectConventions(mixed());
    expect(d.field_mappings.map((f) => f.field)).toEqual([...REPORTED_FIELDS]);
    const f = Object.fromEntries(d.field_mappings.map((m) => [m.field, m]));
    expect(f.kind).toEqual({ field: 'kind', source_attributes: ['gen_ai.operation.name', 'openinference.span.kind'], spans_mapped: 4, coverage: 0.444 });
    expect(f.tokens_input).toEqual({ field: 'tokens_input', source_attributes: ['llm.token_count.prompt'], spans_mapped: 1, coverage: 0.111 });
    expect(f.retrieved_documents).toEqual({ field: 'retrieved_documents', source_attributes: [], spans_mapped: 0, coverage: 0 });
    expect(f.tool_calls.source_attributes).toEqual([
      'input.value',
      'llm.output_messages.*.message.tool_calls.*.tool_call.function.arguments',
      'llm.output_messages.*.message.tool_calls.*.tool_call.function.name',
      'llm.output_messages.*.message.tool_calls.*.tool_call.id',
      'tool.name',
    ]);
    expect(f.tool_calls.spans_mapped).toBe(2);
    expect(f.service_name.spans_mapped).toBe(6);
    expect(f.trace_id).toEqual({ field: 'trace_id', source_attributes: ['@span.trace_id'], spans_mapped: 6, coverage: 0.667 });
    expect(f.duration_ms.source_attributes).toEqual(['@span.end_time_unix_nano', '@span.start_time_unix_nano']);
    expect(f.parent_span_id.spans_mapped).toBe(0);
  });

  it('lists unmapped attributes folded by index with their fate', () => {
    const d = detectConventions(mixed(), { keepUnmapped: true, maxAttributeBytes: 18 });
    const u = Object.fromEntries(d.unmapped_attributes.map((x) => [x.key, x]));
    expect(u['llm.input_messages.*.message.content']).toEqual({
      key: 'llm.input_messages.*.message.content',
      spans: 1,
      fate: 'dropped', // '"Weather in Paris?"' is 19 bytes > 18; '"You are helpful."' (18) is kept
      spans_dropped: 1,
      examples: ['llm.input_messages.0.message.content', 'llm.input_messages.1.message.content'],
    });
    expect(u['llm.input_messages.*.message.role']).toMatchObject({ spans: 1, fate: 'kept', spans_dropped: 0 });
    expect(u['db.system']).toMatchObject({ spans: 1, fate: 'kept' });
    expect(u['resource.telemetry.sdk.language']).toMatchObject({ spans: 6, fate: 'kept' });
    const all = detectConventions(mixed(), { keepUnmapped: false });
    expect(all.unmapped_attributes.every((x) => x.fate === 'dropped' && x.spans_dropped === x.spans)).toBe(true);
  });

  it('warns about sessions, token counts and sampling', () => {
    const d = detectConventions(mixed());
    expect(d.warnings).toContain('1 of 2 llm spans have no token counts: cost can only be reported, not estimated, for them');
    // All valid spans share one trace and one of them has a session id: no session warning.
    expect(d.warnings.some((w) => w.includes('session'))).toBe(false);

    const other = '5bf92f3577b34da6a3ce929d0e0e4737';
    const two = detectConventions([oiLlm(), span({ trace_id: other, attributes: { 'openinference.span.kind': 'LLM', 'llm.model_name': 'gpt-4o', 'llm.token_count.prompt': 1 } })]);
    expect(two.warnings).toContain('1 of 2 sampled traces have no span with a session id');
    const noSession = detectConventions([span({ trace_id: other, attributes: { 'openinference.span.kind': 'CHAIN' } })]);
    expect(noSession.warnings).toContain('no session id on any sampled span: traces cannot be grouped into sessions');

    const sampled = detectConventions(mixed(), { sample: 3 });
    expect(sampled.sampled).toBe(3);
    expect(sampled.warnings[0]).toBe('examined 3 of 9 spans (sample cap 3)');
  });

  it('gives plain_otel with confidence 1 when no span carries LLM markers, and 0 for no spans', () => {
    const d = detectConventions([span({ attributes: { 'http.request.method': 'GET' } })]);
    expect([d.convention, d.confidence]).toEqual(['plain_otel', 1]);
    const none = detectConventions([]);
    expect([none.convention, none.confidence, none.sampled, none.field_mappings.length]).toEqual(['plain_otel', 0, 0, REPORTED_FIELDS.length]);
  });
});

describe('foldKey', () => {
  it('folds numeric segments only', () => {
    expect(foldKey('llm.input_messages.10.message.contents.0.message_content.text')).toBe('llm.input_messages.*.message.contents.*.message_content.text');
    expect(foldKey('gen_ai.usage.input_tokens')).toBe('gen_ai.usage.input_tokens');
    expect(foldKey('0.a')).toBe('*.a');
  });
});
