/**
 * A 20,000-span agent trace as the OpenTelemetry JS SDK records it with GenAI attributes, deep and
 * wide: an orchestrator agent with planning model calls and 10 workers, each worker 10 helper
 * agents, each helper 98 steps of a model call requesting a tool and the tool run, its last tool
 * calling through an MCP client span. Beside the spans, what any enrichment must find in it,
 * counted from the plan here (not by the service's code).
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';

export const LARGE_TRACE = { workers: 10, helpersPerWorker: 10, stepsPerHelper: 98, planningCalls: 189 } as const;
const TOOLS = ['search_flights', 'lookup_order', 'get_weather', 'convert_currency'];
const MCP_TOOL = 'mcp_lookup';
/** Every this many tool runs, one fails */
const FAILING_EVERY = 500;

export interface LargeTraceExpectation {
  spans: number;
  llmCalls: number;
  toolCalls: Record<string, number>;
  tokensInput: number;
  tokensOutput: number;
  errors: number;
  maxDepth: number;
  /** Span ids per depth (a root is 1) */
  depthOf: Map<string, number>;
}

/** Records the trace; `t0` (epoch ms) is its start, each span starting a millisecond after the one before. */
export function largeAgentTrace(t0 = Date.UTC(2026, 10, 28, 9, 0, 0)): {
  spans: ReadableSpan[];
  expected: LargeTraceExpectation;
} {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
    spanLimits: { attributeCountLimit: 64 },
  });
  const tracer = provider.getTracer('large-agent', '1.0.0');
  const expected: LargeTraceExpectation = {
    spans: 0,
    llmCalls: 0,
    toolCalls: {},
    tokensInput: 0,
    tokensOutput: 0,
    errors: 0,
    maxDepth: 0,
    depthOf: new Map(),
  };
  let clock = t0;
  let toolRuns = 0;
  const open = (
    name: string,
    parent: Span | null,
    depth: number,
    attributes: Record<string, string | number>,
    kind = SpanKind.INTERNAL,
  ): Span => {
    const span = tracer.startSpan(
      name,
      { kind, attributes, startTime: clock++ },
      parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT,
    );
    expected.spans++;
    expected.maxDepth = Math.max(expected.maxDepth, depth);
    expected.depthOf.set(span.spanContext().spanId, depth);
    return span;
  };
  const chat = (parent: Span, depth: number, n: number, tool: string | null) => {
    const [input, output] = [100 + (n % 7), 20 + (n % 5)];
    const span = open(
      'chat gpt-4o-mini',
      parent,
      depth,
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.usage.input_tokens': input,
        'gen_ai.usage.output_tokens': output,
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `step ${n}` }] }]),
        'gen_ai.output.messages': JSON.stringify([
          {
            role: 'assistant',
            parts: tool
              ? [{ type: 'tool_call', id: `call_${n}`, name: tool, arguments: { n } }]
              : [{ type: 'text', content: `plan ${n}` }],
          },
        ]),
      },
      SpanKind.CLIENT,
    );
    expected.llmCalls++;
    expected.tokensInput += input;
    expected.tokensOutput += output;
    span.end(clock);
  };
  const tool = (parent: Span, depth: number, n: number, name: string, viaMcp: boolean) => {
    const span = open(`execute_tool ${name}`, parent, depth, {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      'gen_ai.tool.call.id': `call_${n}`,
      'gen_ai.tool.call.arguments': JSON.stringify({ n }),
    });
    expected.toolCalls[name] = (expected.toolCalls[name] ?? 0) + 1;
    if (viaMcp) {
      const mcp = open(
        `tools/call ${MCP_TOOL}`,
        span,
        depth + 1,
        { 'mcp.method.name': 'tools/call', 'server.address': 'mcp.internal', 'server.port': 3000 },
        SpanKind.CLIENT,
      );
      expected.toolCalls[MCP_TOOL] = (expected.toolCalls[MCP_TOOL] ?? 0) + 1;
      mcp.end(clock);
    }
    if (++toolRuns % FAILING_EVERY === 0) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: `tool ${name} timed out` });
      expected.errors++;
    }
    span.end(clock);
  };

  const agent = (name: string, parent: Span | null, depth: number) =>
    open(`invoke_agent ${name}`, parent, depth, { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': name });
  let n = 0;
  const root = agent('orchestrator', null, 1);
  for (let p = 0; p < LARGE_TRACE.planningCalls; p++) chat(root, 2, n++, null);
  for (let w = 0; w < LARGE_TRACE.workers; w++) {
    const worker = agent(`worker-${w}`, root, 2);
    for (let h = 0; h < LARGE_TRACE.helpersPerWorker; h++) {
      const helper = agent(`helper-${w}-${h}`, worker, 3);
      for (let s = 0; s < LARGE_TRACE.stepsPerHelper; s++) {
        const name = TOOLS[n % TOOLS.length];
        chat(helper, 4, n, name);
        tool(helper, 4, n++, name, s === LARGE_TRACE.stepsPerHelper - 1);
      }
      helper.end(clock);
    }
    worker.end(clock);
  }
  root.end(clock);
  return { spans: exporter.getFinishedSpans(), expected };
}
