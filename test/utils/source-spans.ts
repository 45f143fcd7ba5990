import type { NormaliseResult } from '#libs/traces/conventions.js';
import type { SourceSpan } from '#libs/traces/span.types.js';

/** Source spans for the convention mappers' unit tests: one trace, one clock, a counter for span ids. */
export const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
export const START = '1700000000000000000'; // 2023-11-14T22:13:20.000Z
export const END = '1700000001234567891'; // +1234.567891 ms

let ref = 0;
export function span(over: Partial<SourceSpan> & { attributes?: SourceSpan['attributes'] }): SourceSpan {
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

export function ok(r: NormaliseResult): Extract<NormaliseResult, { ok: true }> {
  if (!r.ok) throw new Error(`expected ok, got drop ${r.drop.reason}: ${r.drop.detail}`);
  return r;
}

export const keep = { keepUnmapped: true };

// As openinference-instrumentation-openai emits a chat completion with a tool call.
export const oiLlm = (): SourceSpan =>
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
