// A small tool-calling agent on the `openai` client, instrumented by a third party's OpenTelemetry
// instrumentation and exporting its spans to an OTLP endpoint: what an application of a team that
// uses OpenInference or OpenLLMetry sends. Run as a process of its own (require-in-the-middle
// hooks do not see jest's module registry), the instrumentation applied by manuallyInstrument.
//
// Env: INSTRUMENTATION (openinference | openllmetry), MODEL_URL (an OpenAI-compatible /v1 base),
// OTLP_URL (…/v1/traces), API_KEY, DATASET (x-ews-dataset), TASK (the user's message).
// Prints {"trace_id": …, "answer": …} once its spans are exported.
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { OpenAIInstrumentation as OpenInferenceOpenAI } from '@arizeai/openinference-instrumentation-openai';
import { OpenAIInstrumentation as TraceloopOpenAI } from '@traceloop/instrumentation-openai';
import OpenAI from 'openai';

const env = process.env;
const exporter = new OTLPTraceExporter({
  url: env.OTLP_URL,
  headers: { Authorization: `Bearer ${env.API_KEY}`, 'x-ews-dataset': env.DATASET },
});
const provider = new TracerProvider({
  resource: resourceFromAttributes({ 'service.name': `agent-${env.INSTRUMENTATION}` }),
  spanProcessors: [new BatchSpanProcessor({ exporter })],
});
// The agent's span is the model calls' parent only through the active context, as under the Node SDK.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(provider);

if (env.INSTRUMENTATION === 'openinference') {
  const instrumentation = new OpenInferenceOpenAI();
  instrumentation.setTracerProvider(provider);
  instrumentation.manuallyInstrument({ OpenAI });
} else if (env.INSTRUMENTATION === 'openllmetry') {
  const instrumentation = new TraceloopOpenAI({ traceContent: true, enrichTokens: false });
  instrumentation.setTracerProvider(provider);
  instrumentation.manuallyInstrument(OpenAI);
} else throw new Error(`INSTRUMENTATION: ${env.INSTRUMENTATION}`);

const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];
const client = new OpenAI({ baseURL: env.MODEL_URL, apiKey: 'test-key' });
const tracer = provider.getTracer('instrumented-agent');
let traceId = '';
const answer = await tracer.startActiveSpan('weather-agent', async (agent) => {
  traceId = agent.spanContext().traceId;
  const messages = [{ role: 'user', content: env.TASK }];
  for (let turn = 0; turn < 5; turn++) {
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, tools });
    const message = completion.choices[0].message;
    messages.push(message);
    if (!message.tool_calls?.length) {
      agent.end();
      return message.content;
    }
    for (const call of message.tool_calls)
      messages.push({
        role: 'tool',
        tool_call_id: call.id,
        content: JSON.stringify({ city: JSON.parse(call.function.arguments).city, sky: 'sunny' }),
      });
  }
  agent.end();
  return null;
});
await provider.forceFlush();
await provider.shutdown();
process.stdout.write(JSON.stringify({ trace_id: traceId, answer }));
