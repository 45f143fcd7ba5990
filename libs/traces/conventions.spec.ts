import { describe, expect, it } from '@jest/globals';
import { END, keep, oiLlm, ok, span, START } from '../../test/utils/source-spans.js';
import { detectSpanConvention, normaliseSpan } from './conventions.js';
import { jsonBytes, jsonBytesBound, jsonFits } from './conventions/mapping-context.js';

describe('detectSpanConvention', () => {
  it('recognises each convention by its markers', () => {
    expect(detectSpanConvention(oiLlm())).toBe('openinference');
    expect(detectSpanConvention(span({ attributes: { 'gen_ai.operation.name': 'chat' } }))).toBe('genai');
    expect(
      detectSpanConvention(span({ attributes: { 'llm.request.type': 'chat', 'gen_ai.request.model': 'gpt-4o' } })),
    ).toBe('openllmetry');
    expect(detectSpanConvention(span({ attributes: { 'langfuse.observation.type': 'generation' } }))).toBe('langfuse');
    expect(detectSpanConvention(span({ attributes: { 'http.request.method': 'GET' } }))).toBe('plain_otel');
    expect(
      detectSpanConvention(
        span({ events: [{ name: 'gen_ai.user.message', time_unix_nano: START, attributes: { content: 'hi' } }] }),
      ),
    ).toBe('genai');
  });

  it('prefers the most specific convention when several match', () => {
    expect(
      detectSpanConvention(
        span({
          attributes: {
            'openinference.span.kind': 'LLM',
            'langfuse.observation.type': 'generation',
            'gen_ai.system': 'openai',
          },
        }),
      ),
    ).toBe('openinference');
    expect(
      detectSpanConvention(
        span({
          attributes: {
            'langfuse.observation.type': 'generation',
            'traceloop.span.kind': 'task',
            'gen_ai.system': 'openai',
          },
        }),
      ),
    ).toBe('langfuse');
    expect(
      detectSpanConvention(span({ attributes: { 'traceloop.span.kind': 'task', 'gen_ai.system': 'openai' } })),
    ).toBe('openllmetry');
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
    const big = span({
      attributes: { 'openinference.span.kind': 'CHAIN', metadata: 'x'.repeat(100), 'tag.tags': ['a'] },
    });
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
      [
        'llm.input_messages.1.message.contents.1.message_content.image.image.url',
        'llm.input_messages.1.message.contents.1.message_content.type',
        'otel.scope.name',
        'otel.scope.version',
        'resource.telemetry.sdk.language',
      ].sort(),
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
    const otlp = ok(
      normaliseSpan(
        span({
          status_code: 'error',
          status_message: 'rate limited',
          attributes: { 'openinference.span.kind': 'LLM' },
        }),
        'auto',
        keep,
      ),
    );
    expect([otlp.span.status, otlp.span.error]).toEqual(['error', 'rate limited']);
    expect(otlp.used.error).toEqual(['@span.status']);

    const exc = ok(
      normaliseSpan(
        span({
          attributes: { 'openinference.span.kind': 'TOOL', 'tool.name': 'search' },
          events: [
            {
              name: 'exception',
              time_unix_nano: START,
              attributes: {
                'exception.type': 'ValueError',
                'exception.message': 'boom',
                'exception.stacktrace': 'Traceback...',
              },
            },
          ],
        }),
        'auto',
        keep,
      ),
    );
    expect([exc.span.status, exc.span.error]).toEqual(['error', 'ValueError: boom']);
    expect(exc.used.status).toEqual(['@event.exception']);
    // The stacktrace has no field: the event is kept.
    expect(exc.span.attributes['span.events']).toEqual([
      {
        name: 'exception',
        time_unix_nano: START,
        attributes: {
          'exception.type': 'ValueError',
          'exception.message': 'boom',
          'exception.stacktrace': 'Traceback...',
        },
      },
    ]);

    const fine = ok(
      normaliseSpan(span({ status_code: 'ok', attributes: { 'openinference.span.kind': 'CHAIN' } }), 'auto', keep),
    );
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
            'gen_ai.output.messages':
              '[{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"get_weather","arguments":{"city":"Paris"}}],"finish_reason":"tool_call"}]',
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
      [
        'gen_ai.provider.name',
        'gen_ai.request.model',
        'gen_ai.response.id',
        'gen_ai.response.finish_reasons',
        'server.address',
        'otel.scope.name',
        'otel.scope.version',
        'resource.telemetry.sdk.language',
      ].sort(),
    );
  });

  it('maps the older prompt/completion token names and message events', () => {
    const r = ok(
      normaliseSpan(
        span({
          name: 'chat',
          attributes: {
            'gen_ai.system': 'openai',
            'gen_ai.request.model': 'gpt-4o-mini',
            'gen_ai.usage.prompt_tokens': 11,
            'gen_ai.usage.completion_tokens': 7,
          },
          events: [
            { name: 'gen_ai.system.message', time_unix_nano: START, attributes: { content: 'Be brief.' } },
            { name: 'gen_ai.user.message', time_unix_nano: START, attributes: { content: 'Hi' } },
            {
              name: 'gen_ai.choice',
              time_unix_nano: END,
              attributes: { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Hello!' } },
            },
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
    // The tool's own name, not the span name `execute_tool get_weather`.
    expect(r.span.name).toBe('get_weather');
    expect(r.used.name).toEqual(['gen_ai.tool.name']);
    expect(r.span.tool_calls).toEqual([{ name: 'get_weather', arguments: { city: 'Paris' }, id: 'call_1' }]);
    expect(r.span.input).toEqual({ city: 'Paris' });
    expect([r.span.status, r.span.error]).toEqual(['error', 'TimeoutError']);
    expect(r.used.status).toEqual(['error.type']);

    // With an OTLP status message, that message wins and error.type stays as a kept attribute.
    const r2 = ok(
      normaliseSpan(
        span({
          status_code: 'error',
          status_message: 'timed out after 30s',
          attributes: { 'gen_ai.operation.name': 'execute_tool', 'error.type': 'TimeoutError' },
        }),
        'auto',
        keep,
      ),
    );
    expect(r2.span.error).toBe('timed out after 30s');
    expect(r2.span.attributes['error.type']).toBe('TimeoutError');
  });

  it('maps agent operations', () => {
    const r = ok(
      normaliseSpan(
        span({
          name: 'invoke_agent Planner',
          attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'Planner' },
        }),
        'auto',
        keep,
      ),
    );
    expect(r.span.kind).toBe('agent');
    // The agent's own name, as OpenInference and OpenLLMetry give it, not the span name.
    expect(r.span.name).toBe('Planner');
    expect(r.span.attributes).not.toHaveProperty('gen_ai.agent.name');

    // Without gen_ai.agent.name the span name stays; a chat span keeps its name whatever agent it serves.
    const unnamed = ok(
      normaliseSpan(
        span({ name: 'invoke_agent', attributes: { 'gen_ai.operation.name': 'invoke_agent' } }),
        'auto',
        keep,
      ),
    );
    expect(unnamed.span.name).toBe('invoke_agent');
    const chat = ok(
      normaliseSpan(
        span({ name: 'chat gpt-4o', attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.agent.name': 'Planner' } }),
        'auto',
        keep,
      ),
    );
    expect(chat.span.name).toBe('chat gpt-4o');
  });

  it('names OpenInference agents and tools by agent.name and tool.name when their span names differ', () => {
    const agent = ok(
      normaliseSpan(
        span({ name: 'Agent.run', attributes: { 'openinference.span.kind': 'AGENT', 'agent.name': 'support-agent' } }),
        'auto',
        keep,
      ),
    );
    expect([agent.span.kind, agent.span.name]).toEqual(['agent', 'support-agent']);
    const tool = ok(
      normaliseSpan(
        span({
          name: 'FunctionTool.call',
          attributes: { 'openinference.span.kind': 'TOOL', 'tool.name': 'lookup_order' },
        }),
        'auto',
        keep,
      ),
    );
    expect([tool.span.kind, tool.span.name]).toEqual(['tool', 'lookup_order']);
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
    expect(s.output).toEqual([
      {
        role: 'assistant',
        finish_reason: 'tool_calls',
        tool_calls: [{ id: 'call_1', name: 'search', arguments: { q: 'cat jokes' } }],
      },
    ]);
    expect(s.tool_calls).toEqual([{ name: 'search', arguments: { q: 'cat jokes' }, id: 'call_1' }]);
    expect(llm.unmapped.sort()).toEqual(
      [
        'gen_ai.request.model',
        'gen_ai.system',
        'llm.is_streaming',
        'otel.scope.name',
        'otel.scope.version',
        'resource.telemetry.sdk.language',
        'traceloop.workflow.name',
      ].sort(),
    );
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
    expect(r.unmapped.sort()).toEqual(
      [
        'langfuse.observation.model.parameters',
        'langfuse.trace.name',
        'otel.scope.name',
        'otel.scope.version',
        'resource.telemetry.sdk.language',
      ].sort(),
    );
  });

  it('reads the session.id / user.id the Langfuse v3 SDK writes, and maps tool observations', () => {
    const r = ok(
      normaliseSpan(
        span({
          name: 'lookup_order',
          attributes: {
            'langfuse.observation.type': 'tool',
            'langfuse.observation.input': '{"order": 7}',
            'session.id': 's-3',
            'user.id': 'u-3',
          },
        }),
        'auto',
        keep,
      ),
    );
    expect([r.span.kind, r.span.session_id, r.span.user_id]).toEqual(['tool', 's-3', 'u-3']);
    expect(r.span.tool_calls).toEqual([{ name: 'lookup_order', arguments: { order: 7 }, id: null }]);
    expect(r.span.status).toBe('unset');
  });
});

describe('jsonBytesBound', () => {
  it('is never below the bytes of the JSON, and cannot bound what JSON.stringify writes its own way', () => {
    const values: unknown[] = [
      'plain',
      'é 😀 \u0000 \ud800 "\\\n',
      -2.2250738585072014e-308,
      1e21,
      Number.NaN,
      true,
      null,
      [undefined, () => 1, 'x'],
      { a: undefined, 'ключ\u0001': [1, { b: [[]] }], '': {} },
    ];
    for (const v of values) expect(jsonBytesBound(v)).toBeGreaterThanOrEqual(jsonBytes(v));
    expect(jsonBytesBound({ at: new Date(0) })).toBe(Number.POSITIVE_INFINITY);
    expect(jsonBytesBound([1n])).toBe(Number.POSITIVE_INFINITY);
    // Near the limit the bytes themselves decide.
    expect(jsonFits('x'.repeat(10), 12)).toBe(true);
    expect(jsonFits('x'.repeat(11), 12)).toBe(false);
    expect(jsonFits({ at: new Date(0) }, 10)).toBe(false);
  });
});
