/**
 * An agent as teams deploy one, for runs linked to the SUT's own trace: an HTTP endpoint that
 * continues the W3C trace context its request carries, runs a tool-calling loop against an
 * OpenAI-compatible model (test/utils/tool-calling-model.ts), executes the tools it asks for, and
 * exports its spans (GenAI semantic conventions: invoke_agent, chat, execute_tool) through the
 * OpenTelemetry SDK's batch processor and OTLP/protobuf exporter to the service's receiver, after
 * it has answered, as a real agent's exporter does.
 */
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AgentSutOptions {
  /** The model's base URL (`…/v1`). */
  modelUrl: string;
  /** The service's URL and an API key (member) the exporter sends with, and the trace dataset it names. */
  otlpUrl: string;
  apiKey: string;
  dataset: string;
  /** The tools the agent can execute; one that throws fails its span. */
  tools: Record<string, (args: Record<string, unknown>) => unknown>;
  /** The batch processor's delay before it exports (spans arrive after the answer). */
  exportDelayMs?: number;
}

export interface AgentSut {
  url: string;
  /** The `traceparent` each request carried, in order. */
  traceparents: string[];
  close(): Promise<void>;
}

interface ChatMessage {
  role: string;
  content: string | null;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

const MODEL = 'gpt-4o-mini';

export async function agentSut(opts: AgentSutOptions): Promise<AgentSut> {
  const exporter = new OTLPTraceExporter({
    url: `${opts.otlpUrl}/v1/traces`,
    headers: { Authorization: `Bearer ${opts.apiKey}`, 'x-ews-dataset': opts.dataset },
  });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'support-agent' }),
    spanProcessors: [
      new BatchSpanProcessor({ exporter, maxExportBatchSize: 16, scheduledDelayMillis: opts.exportDelayMs ?? 50 }),
    ],
  });
  const tracer = provider.getTracer('support-agent', '1.0.0');
  const propagator = new W3CTraceContextPropagator();
  const traceparents: string[] = [];

  const chat = async (messages: ChatMessage[], parent: Span): Promise<ChatMessage> => {
    const span = tracer.startSpan(
      `chat ${MODEL}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': MODEL,
          'gen_ai.input.messages': JSON.stringify(messages.map(genaiMessage)),
        },
      },
      trace.setSpan(context.active(), parent),
    );
    const tools = Object.keys(opts.tools).map((name) => ({ type: 'function', function: { name, parameters: {} } }));
    const response = await fetch(`${opts.modelUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages, tools }),
    });
    const body = (await response.json()) as {
      model: string;
      choices: Array<{ message: ChatMessage; finish_reason: string }>;
      usage: { prompt_tokens: number; completion_tokens: number };
    };
    const message = body.choices[0].message;
    span.setAttributes({
      'gen_ai.response.model': body.model,
      'gen_ai.usage.input_tokens': body.usage.prompt_tokens,
      'gen_ai.usage.output_tokens': body.usage.completion_tokens,
      'gen_ai.response.finish_reasons': [body.choices[0].finish_reason],
      'gen_ai.output.messages': JSON.stringify([genaiMessage(message)]),
    });
    span.end();
    return message;
  };

  const execute = (call: NonNullable<ChatMessage['tool_calls']>[number], parent: Span): string => {
    const span = tracer.startSpan(
      `execute_tool ${call.function.name}`,
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': call.function.name,
          'gen_ai.tool.call.id': call.id,
          'gen_ai.tool.call.arguments': call.function.arguments,
        },
      },
      trace.setSpan(context.active(), parent),
    );
    let result: string;
    try {
      const tool = opts.tools[call.function.name];
      if (!tool) throw new Error(`no tool named ${call.function.name}`);
      result = JSON.stringify(tool(JSON.parse(call.function.arguments) as Record<string, unknown>));
      span.setAttribute('gen_ai.tool.call.result', result);
    } catch (error) {
      result = JSON.stringify({ error: (error as Error).message });
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    }
    span.end();
    return result;
  };

  const answer = async (question: string, headers: IncomingHttpHeaders): Promise<string> => {
    const carrier = { traceparent: String(headers.traceparent ?? '') };
    const parent = propagator.extract(context.active(), carrier, {
      get: (c, key) => c[key as keyof typeof c] || undefined,
      keys: (c) => Object.keys(c),
    });
    const agent = tracer.startSpan(
      'invoke_agent support-agent',
      {
        kind: SpanKind.SERVER,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': 'support-agent',
          'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: question }] }]),
        },
      },
      parent,
    );
    const messages: ChatMessage[] = [{ role: 'user', content: question }];
    for (let round = 0; round < 10; round++) {
      const reply = await chat(messages, agent);
      messages.push(reply);
      if (!reply.tool_calls?.length) {
        agent.setAttribute(
          'gen_ai.output.messages',
          JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: reply.content }] }]),
        );
        agent.end();
        return reply.content ?? '';
      }
      for (const call of reply.tool_calls)
        messages.push({ role: 'tool', tool_call_id: call.id, content: execute(call, agent) });
    }
    agent.end();
    return 'gave up';
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      traceparents.push(String(req.headers.traceparent ?? ''));
      const { question } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { question: string };
      answer(question, req.headers).then(
        (text) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ answer: text }));
        },
        (error: Error) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: error.message }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    traceparents,
    async close() {
      await provider.forceFlush();
      await provider.shutdown();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A chat message in the GenAI conventions' parts form. */
function genaiMessage(m: ChatMessage): Record<string, unknown> {
  const parts: Array<Record<string, unknown>> = [];
  if (m.content)
    parts.push({ type: m.role === 'tool' ? 'tool_call_response' : 'text', content: m.content, id: m.tool_call_id });
  for (const c of m.tool_calls ?? [])
    parts.push({ type: 'tool_call', id: c.id, name: c.function.name, arguments: JSON.parse(c.function.arguments) });
  return { role: m.role, parts };
}
