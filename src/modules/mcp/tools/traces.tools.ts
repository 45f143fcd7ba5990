import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { SpanTreePage } from '../../traces/dto/span-tree.dto.js';
import { type McpApi, path, ToolInputError } from '../mcp-api.js';
import { answer, clipValue, guarded } from '../tool-results.js';
import { id, READS, versionOf } from './tool-kit.js';

/** What a trace's line in a search keeps of its enrichment (the rest is a show_trace away). */
const TRACE_FIELDS = [
  'trace_id',
  'session_id',
  'start_time',
  'duration_ms',
  'span_count',
  'has_error',
  'error_count',
  'errors',
  'models',
  'tokens_total',
  'cost',
  'llm_calls',
  'tool_calls',
  'loop_detected',
  'tags',
  'feedback',
  'scores',
] as const;

/** What a span in a tree keeps: the canonical fields that explain it, its payloads clipped. */
const SPAN_FIELDS = [
  'span_id',
  'parent_span_id',
  'name',
  'kind',
  'status',
  'error',
  'start_time',
  'duration_ms',
  'model',
  'tokens_total',
  'cost',
  'input',
  'output',
  'tool_calls',
] as const;

function pick(record: Record<string, unknown>, fields: readonly string[], maxChars: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields)
    if (record[field] !== undefined && record[field] !== null) out[field] = clipValue(record[field], maxChars);
  return out;
}

interface EnrichmentPage {
  version_id: string;
  state: string;
  items: Array<Record<string, unknown>>;
  total: number;
}

const flag = (value: boolean | undefined) => (value === undefined ? undefined : String(value));

/** Production traces: search a trace dataset by what its enrichment found, read one trace as a tree. */
export function registerTraceTools(server: McpServer, api: McpApi): void {
  searchTraces(server, api);
  showTrace(server, api);
}

/** Search traces: the `search_traces` tool. */
function searchTraces(server: McpServer, api: McpApi): void {
  server.registerTool(
    'search_traces',
    {
      title: 'Search traces',
      description:
        'Traces of a trace dataset (find_datasets kind "traces"; default version: its newest) filtered by what enrichment and evaluation found: errors, tool-call loops, a failing online score, a metric\'s score at most score_max, end-user feedback, model, tag, session, duration or cost; sorted (e.g. by cost, duration_ms, error_count). Each trace: timing, spans, errors, models, tokens, cost, feedback and scores. Read one with show_trace.',
      inputSchema: z.object({
        dataset_id: id(),
        version_id: id().optional(),
        has_error: z.boolean().optional(),
        loop_detected: z.boolean().optional(),
        score_passed: z
          .boolean()
          .optional()
          .describe('Only traces whose online scores passed (true) or failed (false)'),
        score_metric: z.string().max(200).optional(),
        score_max: z.number().optional(),
        feedback_name: z.string().max(100).optional(),
        feedback_value: z.string().max(200).optional().describe('"false" is a thumbs down'),
        model: z.string().max(200).optional(),
        tag: z.string().max(100).optional(),
        session_id: z.string().max(200).optional(),
        min_duration_ms: z.number().min(0).optional(),
        min_cost: z.number().min(0).optional(),
        sort: z
          .enum(['start_time', 'duration_ms', 'cost', 'tokens_total', 'error_count', 'span_count'])
          .default('start_time'),
        order: z.enum(['asc', 'desc']).default('desc'),
        limit: z.int().min(1).max(50).default(20),
        offset: z.int().min(0).max(1_000_000).default(0),
      }),
      outputSchema: z.object({
        dataset_id: z.string(),
        version_id: z.string(),
        enrichment_state: z.string(),
        total: z.number(),
        traces: z.array(z.record(z.string(), z.unknown())),
        more: z.boolean(),
      }),
      annotations: READS,
    },
    guarded(async (args) => {
      const versionId = await versionOf(api, args.dataset_id, args.version_id);
      if (!versionId) throw new ToolInputError('The dataset has no version yet: no traces have landed.');
      const { dataset_id, version_id: _named, has_error, loop_detected, score_passed, ...filters } = args;
      const page = await api.get<EnrichmentPage>(
        path`/datasets/${dataset_id}/versions/${versionId}/trace-enrichment/results`,
        {
          ...filters,
          has_error: flag(has_error),
          loop_detected: flag(loop_detected),
          score_passed: flag(score_passed),
        },
      );
      return answer({
        dataset_id,
        version_id: page.version_id,
        enrichment_state: page.state,
        total: page.total,
        traces: page.items.map((item) => pick(item, TRACE_FIELDS, 200)),
        more: args.offset + page.items.length < page.total,
      });
    }),
  );
}

/** Show a trace: the `show_trace` tool. */
function showTrace(server: McpServer, api: McpApi): void {
  server.registerTool(
    'show_trace',
    {
      title: 'Show a trace',
      description:
        "One trace as a tree, level by level from its roots down to max_depth: each span's name, kind, status and error, timing, model, tokens, cost, clipped input and output, tool calls and how many children it has; with the trace's enrichment (errors, loops, tool-call counts, feedback, scores). A span whose children were not shown has child_count > 0: raise max_depth or pass cursor for the next page.",
      inputSchema: z.object({
        dataset_id: id(),
        version_id: id().optional(),
        trace_id: z.string().min(1).max(200),
        max_depth: z.int().min(1).max(50).default(4),
        limit: z.int().min(1).max(200).default(60).describe('Spans on this page'),
        cursor: z.string().max(2000).optional(),
        max_chars: z.int().min(50).max(20_000).default(300),
      }),
      outputSchema: z.object({
        trace_id: z.string(),
        version_id: z.string(),
        enrichment: z.record(z.string(), z.unknown()).nullable(),
        spans: z.array(z.record(z.string(), z.unknown())),
        next_cursor: z.string().nullable(),
      }),
      annotations: READS,
    },
    guarded(async (args) => {
      const versionId = await versionOf(api, args.dataset_id, args.version_id);
      if (!versionId) throw new ToolInputError('The dataset has no version yet: no traces have landed.');
      const base = path`/datasets/${args.dataset_id}/versions/${versionId}`;
      const tree = await api.get<SpanTreePage>(`${base}/span-tree/by-depth`, {
        trace_id: args.trace_id,
        max_depth: args.max_depth,
        limit: args.limit,
        cursor: args.cursor,
      });
      const enrichment = args.cursor
        ? undefined
        : (await api.get<EnrichmentPage>(`${base}/trace-enrichment/results`, { trace_id: args.trace_id, limit: 1 }))
            .items[0];
      return answer({
        trace_id: args.trace_id,
        version_id: tree.version_id,
        enrichment: enrichment ? (clipValue(enrichment, 200) as Record<string, unknown>) : null,
        spans: tree.items.map((item) => ({
          depth: item.depth,
          child_count: item.child_count,
          ...pick(item.span as Record<string, unknown>, SPAN_FIELDS, args.max_chars),
        })),
        next_cursor: tree.next_cursor,
      });
    }),
  );
}
