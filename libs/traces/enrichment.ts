/**
 * Per-trace enrichment of landed spans: tokens, cost, errors, tool use, depth, loops. Pure: no I/O.
 *
 * Definitions (also in ENRICHMENT_FIELDS):
 * - Token and cost sums count only the lowest spans carrying them (a span that has tokens/cost and no
 *   descendant that has them), because some instrumentations repeat the children's usage on a parent
 *   (e.g. an agent span summing its model calls) and adding both would double count.
 * - Depth: a root span is depth 1.
 * - Tool use: a tool executed under instrumentation shows up twice, once requested in an llm span's
 *   tool_calls and once as a tool span, so per tool name the count is the larger of the two, not the sum.
 * - Loops: `repeated_call` = the same tool with the same arguments (canonical JSON) called 3+ times in
 *   the trace; `cycle` = a block of 2+ call names (not itself a repetition of a shorter block) that
 *   occurs 3+ times back to back in start-time order among the trace's non-root spans of kind llm,
 *   tool, agent, retriever, reranker or embedding (siblings and descendants alike, as they happen).
 */
import type { CanonicalSpan, SpanKind } from './span.types.js';

export interface ModelPrice {
  /** USD per 1M input (prompt) tokens */
  input_per_1m: number;
  /** USD per 1M output (completion) tokens */
  output_per_1m: number;
}

export interface PriceTable {
  /** Date the prices were read (YYYY-MM-DD) */
  as_of: string;
  currency: 'USD';
  /**
   * Model key -> price. A model matches a key when, lower-cased and without any `provider/` prefix, it
   * equals the key or is the key followed by `-` and a snapshot suffix (a date like 2024-08-06 or
   * 20241022, a 3-digit version like 002, or `latest`). The longest matching key wins, so
   * gpt-4o-mini never takes gpt-4o's price and gpt-4.1-nano does not take gpt-4.1's.
   */
  models: Record<string, ModelPrice>;
}

/** List prices of the providers' standard (non-batch, non-cached) tiers. Gemini 1.5: prompts up to 128k tokens. */
export const DEFAULT_PRICES: PriceTable = {
  as_of: '2025-06-01',
  currency: 'USD',
  models: {
    'gpt-4o': { input_per_1m: 2.5, output_per_1m: 10 },
    'gpt-4o-mini': { input_per_1m: 0.15, output_per_1m: 0.6 },
    'gpt-4.1': { input_per_1m: 2, output_per_1m: 8 },
    'gpt-4.1-mini': { input_per_1m: 0.4, output_per_1m: 1.6 },
    'o3-mini': { input_per_1m: 1.1, output_per_1m: 4.4 },
    'claude-3-5-sonnet': { input_per_1m: 3, output_per_1m: 15 },
    'claude-3-5-haiku': { input_per_1m: 0.8, output_per_1m: 4 },
    'claude-sonnet-4': { input_per_1m: 3, output_per_1m: 15 },
    'gemini-1.5-pro': { input_per_1m: 1.25, output_per_1m: 5 },
    'gemini-1.5-flash': { input_per_1m: 0.075, output_per_1m: 0.3 },
  },
};

export interface DetectedLoop {
  /** Tool name (repeated_call) or the repeating block `a -> b` (cycle) */
  name: string;
  repetitions: number;
  kind: 'repeated_call' | 'cycle';
  /** The repeated arguments (repeated_call) or the span ids where the run starts (cycle) */
  detail: string;
}

export interface TraceError {
  span_id: string;
  span_name: string;
  /** The span's error message; null when it has error status but no message */
  message: string | null;
}

export interface TraceEnrichment {
  trace_id: string;
  session_id: string | null;
  user_id: string | null;
  root_span_name: string | null;
  span_count: number;
  start_time: string | null;
  end_time: string | null;
  duration_ms: number | null;
  tokens_input: number | null;
  tokens_output: number | null;
  tokens_total: number | null;
  cost_reported: number | null;
  cost_estimated: number | null;
  cost: number | null;
  cost_source: 'reported' | 'estimated' | null;
  unpriced_models: string[];
  error_count: number;
  has_error: boolean;
  errors: TraceError[];
  llm_calls: number;
  tool_calls: number;
  tool_call_counts: Record<string, number>;
  retriever_calls: number;
  max_depth: number;
  models: string[];
  loop_detected: boolean;
  loops: DetectedLoop[];
}

export interface EnrichmentFieldDoc {
  name: keyof TraceEnrichment;
  type: string;
  description: string;
}

export const ENRICHMENT_FIELDS: EnrichmentFieldDoc[] = [
  { name: 'trace_id', type: 'string', description: 'Trace id shared by the spans' },
  {
    name: 'session_id',
    type: 'string | null',
    description: 'Session id of the root span, else of the earliest span that has one',
  },
  {
    name: 'user_id',
    type: 'string | null',
    description: 'User id of the root span, else of the earliest span that has one',
  },
  {
    name: 'root_span_name',
    type: 'string | null',
    description: 'Name of the root span (no parent, or parent not in the trace; earliest if several)',
  },
  { name: 'span_count', type: 'number', description: 'Spans in the trace' },
  { name: 'start_time', type: 'string | null', description: 'Earliest span start (ISO 8601)' },
  { name: 'end_time', type: 'string | null', description: 'Latest span end (ISO 8601)' },
  {
    name: 'duration_ms',
    type: 'number | null',
    description: "Root span's duration when a single root covers every span, else end_time - start_time",
  },
  {
    name: 'tokens_input',
    type: 'number | null',
    description:
      'Input tokens summed over the lowest spans reporting them (no double counting of parent totals); null if none',
  },
  { name: 'tokens_output', type: 'number | null', description: 'Output tokens, summed like tokens_input' },
  {
    name: 'tokens_total',
    type: 'number | null',
    description: 'Per span tokens_total (or input + output), summed like tokens_input',
  },
  {
    name: 'cost_reported',
    type: 'number | null',
    description: 'USD cost the spans reported, summed over the lowest spans reporting it; null if none did',
  },
  {
    name: 'cost_estimated',
    type: 'number | null',
    description: 'USD from token counts x price table for priced models; null if no span could be priced',
  },
  {
    name: 'cost',
    type: 'number | null',
    description: 'cost_reported when any span reported cost, else cost_estimated',
  },
  { name: 'cost_source', type: "'reported' | 'estimated' | null", description: 'Which of the two `cost` is' },
  {
    name: 'unpriced_models',
    type: 'string[]',
    description: 'Models of token-reporting spans with no price in the table (their tokens are not in cost_estimated)',
  },
  { name: 'error_count', type: 'number', description: 'Spans with status error' },
  { name: 'has_error', type: 'boolean', description: 'error_count > 0' },
  { name: 'errors', type: '{ span_id, span_name, message }[]', description: 'First 5 error spans in start order' },
  { name: 'llm_calls', type: 'number', description: 'Spans of kind llm' },
  { name: 'tool_calls', type: 'number', description: 'Sum of tool_call_counts' },
  {
    name: 'tool_call_counts',
    type: 'Record<string, number>',
    description: 'Per tool name: max(tool spans, tool calls requested by llm spans)',
  },
  { name: 'retriever_calls', type: 'number', description: 'Spans of kind retriever' },
  { name: 'max_depth', type: 'number', description: 'Deepest span level, root = 1' },
  { name: 'models', type: 'string[]', description: 'Distinct model names (sorted)' },
  { name: 'loop_detected', type: 'boolean', description: 'loops is non-empty' },
  {
    name: 'loops',
    type: "{ name, repetitions, kind: 'repeated_call' | 'cycle', detail }[]",
    description: 'Same tool + same arguments 3+ times, or a block of 2+ call names repeated 3+ times back to back',
  },
];

const round6 = (n: number): number => Math.round(n * 1e6) / 1e6;
const round3 = (n: number): number => Math.round(n * 1000) / 1000;

const SNAPSHOT_SUFFIX = /^(\d{4}-\d{2}-\d{2}|\d{8}|\d{3}|latest)$/;

/** The price-table key for a model name, per the matching rule on PriceTable.models; null if none. */
export function matchPriceKey(model: string, prices: PriceTable): string | null {
  const m = model.toLowerCase().trim().replace(/^.*\//, '');
  let best: string | null = null;
  for (const key of Object.keys(prices.models)) {
    const k = key.toLowerCase();
    const hit = m === k || (m.startsWith(`${k}-`) && SNAPSHOT_SUFFIX.test(m.slice(k.length + 1)));
    if (hit && (best === null || k.length > best.length)) best = key;
  }
  return best;
}

/**
 * Stable JSON (sorted keys) so equal arguments compare equal whatever their key order; JSON strings are parsed first.
 * Loop detection and the trajectory metrics (identical calls, exact arguments) share it.
 */
export function canonicalJson(v: unknown): string {
  const norm = (x: unknown): unknown => {
    if (typeof x === 'string') {
      const t = x.trim();
      if (t.startsWith('{') || t.startsWith('[')) {
        try {
          return norm(JSON.parse(t));
        } catch {
          return x;
        }
      }
      return x;
    }
    if (Array.isArray(x)) return x.map(norm);
    if (x && typeof x === 'object')
      return Object.fromEntries(
        Object.keys(x)
          .sort()
          .map((k) => [k, norm((x as Record<string, unknown>)[k])]),
      );
    return x ?? null;
  };
  return JSON.stringify(norm(v));
}

const CALL_KINDS: ReadonlySet<SpanKind> = new Set<SpanKind>([
  'llm',
  'tool',
  'agent',
  'retriever',
  'reranker',
  'embedding',
]);

/** Tool name of a tool span: its executed call's name, else the span name. */
const toolName = (s: CanonicalSpan): string => s.tool_calls[0]?.name ?? s.name;

function isPrimitiveBlock(block: string[]): boolean {
  const p = block.length;
  for (let d = 1; d < p; d++) {
    if (p % d !== 0) continue;
    let periodic = true;
    for (let i = d; i < p && periodic; i++) if (block[i] !== block[i - d]) periodic = false;
    if (periodic) return false;
  }
  return true;
}

/** Runs of a block of 2..8 labels repeated 3+ times back to back; shorter blocks claim positions first. */
export function findCycles(
  labels: string[],
  minRepeats = 3,
  maxBlock = 8,
): Array<{ block: string[]; start: number; repetitions: number }> {
  const covered = new Array<boolean>(labels.length).fill(false);
  const out: Array<{ block: string[]; start: number; repetitions: number }> = [];
  for (let p = 2; p <= maxBlock && p * minRepeats <= labels.length; p++) {
    let i = 0;
    while (i + p * minRepeats <= labels.length) {
      const block = labels.slice(i, i + p);
      if (covered[i] || !isPrimitiveBlock(block)) {
        i++;
        continue;
      }
      let reps = 1;
      while (
        i + (reps + 1) * p <= labels.length &&
        labels.slice(i + reps * p, i + (reps + 1) * p).every((l, j) => l === block[j])
      )
        reps++;
      if (reps >= minRepeats) {
        out.push({ block, start: i, repetitions: reps });
        for (let j = i; j < i + reps * p; j++) covered[j] = true;
        i += reps * p;
      } else i++;
    }
  }
  return out;
}

/** A trace's spans in start order (then span id), with its roots and each span's children. */
interface TraceTree {
  ordered: CanonicalSpan[];
  /** Spans with no parent in the trace (or their own parent), in start order */
  roots: CanonicalSpan[];
  children: Map<string, CanonicalSpan[]>;
}

/** Orders the spans by start time and links each to its parent in the trace. */
function buildTree(spans: CanonicalSpan[]): TraceTree {
  const ordered = [...spans].sort(
    (a, b) => a.start_time.localeCompare(b.start_time) || a.span_id.localeCompare(b.span_id),
  );
  const byId = new Map(ordered.map((s) => [s.span_id, s]));
  const children = new Map<string, CanonicalSpan[]>();
  const roots: CanonicalSpan[] = [];
  for (const s of ordered) {
    const parent = s.parent_span_id !== null && s.parent_span_id !== s.span_id ? byId.get(s.parent_span_id) : undefined;
    if (!parent) roots.push(s);
    else {
      const list = children.get(parent.span_id);
      if (list) list.push(s);
      else children.set(parent.span_id, [s]);
    }
  }
  return { ordered, roots, children };
}

/** Each reachable span's level, root = 1, walking down from the roots (a span under a parent cycle is reached by none). */
function depthsOf({ roots, children }: TraceTree): Map<string, number> {
  const depth = new Map<string, number>();
  const stack: Array<[CanonicalSpan, number]> = roots.map((r) => [r, 1]);
  while (stack.length > 0) {
    const [s, d] = stack.pop()!;
    if (depth.has(s.span_id)) continue;
    depth.set(s.span_id, d);
    for (const c of children.get(s.span_id) ?? []) stack.push([c, d + 1]);
  }
  return depth;
}

/** The deepest span level of the tree, root = 1 (0 for no spans); spans under a parent cycle count as depth 1. */
function maxDepthOf(tree: TraceTree, depth: Map<string, number>): number {
  let max = tree.ordered.length === 0 ? 0 : 1;
  for (const d of depth.values()) if (d > max) max = d;
  return max;
}

/**
 * The spans having a descendant that carries the value: one pass from the deepest spans up, each
 * telling its parent (no recursion, so a chain of any depth is fine; linear in the spans).
 */
function withCarrierBelow(
  tree: TraceTree,
  depth: Map<string, number>,
  has: (s: CanonicalSpan) => boolean,
): Set<string> {
  const parentOf = new Map<string, string>();
  for (const [parent, kids] of tree.children) for (const c of kids) parentOf.set(c.span_id, parent);
  const byDepth = tree.ordered
    .filter((s) => depth.has(s.span_id))
    .sort((a, b) => depth.get(b.span_id)! - depth.get(a.span_id)!);
  const below = new Set<string>();
  for (const s of byDepth) {
    const parent = parentOf.get(s.span_id);
    if (parent !== undefined && (has(s) || below.has(s.span_id))) below.add(parent);
  }
  return below;
}

/** Lowest carriers: spans with the value and no descendant with it. */
function lowestCarriers(tree: TraceTree, has: (s: CanonicalSpan) => boolean, depth = depthsOf(tree)): CanonicalSpan[] {
  const below = withCarrierBelow(tree, depth, has);
  return tree.ordered.filter((s) => has(s) && !below.has(s.span_id));
}

/** Whether the span reports any token count. */
const hasTokens = (s: CanonicalSpan): boolean =>
  s.tokens_input !== null || s.tokens_output !== null || s.tokens_total !== null;

/** Whether the span reports a cost. */
const hasCost = (s: CanonicalSpan): boolean => s.cost !== null;

/** The sum of the values present; null when none is. */
function sumOrNull(vals: Array<number | null>): number | null {
  const present = vals.filter((v): v is number => v !== null);
  return present.length === 0 ? null : present.reduce((a, b) => a + b, 0);
}

/** Input, output and total tokens summed over the token-carrying spans (a span's total defaults to input + output). */
function tokenSums(tokenSpans: CanonicalSpan[]): {
  input: number | null;
  output: number | null;
  total: number | null;
} {
  return {
    input: sumOrNull(tokenSpans.map((s) => s.tokens_input)),
    output: sumOrNull(tokenSpans.map((s) => s.tokens_output)),
    total: sumOrNull(tokenSpans.map((s) => s.tokens_total ?? (s.tokens_input ?? 0) + (s.tokens_output ?? 0))),
  };
}

/** USD of the token-carrying spans' tokens at table prices (null if none could be priced), and the models with no price. */
function estimateCost(
  tokenSpans: CanonicalSpan[],
  prices: PriceTable,
): { estimated: number | null; unpriced: Set<string> } {
  let estimated: number | null = null;
  const unpriced = new Set<string>();
  for (const s of tokenSpans) {
    if (s.model === null) continue;
    const key = matchPriceKey(s.model, prices);
    if (key === null) {
      unpriced.add(s.model);
      continue;
    }
    estimated = (estimated ?? 0) + priceOf(prices.models[key], s.tokens_input, s.tokens_output);
  }
  return { estimated: estimated === null ? null : round6(estimated), unpriced };
}

/** USD of input and output tokens at a model's price. */
function priceOf(p: ModelPrice, input: number | null, output: number | null): number {
  return ((input ?? 0) * p.input_per_1m + (output ?? 0) * p.output_per_1m) / 1e6;
}

/** USD of a call's tokens at the table's price for its model (unrounded), or null when the model has no price. */
export function tokenCost(
  model: string,
  input: number | null,
  output: number | null,
  prices: PriceTable = DEFAULT_PRICES,
): number | null {
  const key = matchPriceKey(model, prices);
  return key === null ? null : priceOf(prices.models[key], input, output);
}

/**
 * A trace's (or any group of spans') input and output tokens, counted as enrichment counts them:
 * only the lowest spans that carry them, so parents repeating their children's usage count once.
 */
export function spanTokens(spans: CanonicalSpan[]): { input: number | null; output: number | null } {
  const { input, output } = tokenSums(lowestCarriers(buildTree(spans), hasTokens));
  return { input, output };
}

/** One tool call, executed (tool span) or requested (llm span), with its canonical arguments. */
interface Invocation {
  name: string;
  args: string;
  span_id: string;
}

/** Calls per tool name (sorted by name) and every invocation, requested ones only for tools never executed. */
function toolUse(ordered: CanonicalSpan[]): { counts: Record<string, number>; invocations: Invocation[] } {
  // Tool use: executed (tool spans) vs requested (llm tool_calls), max per name.
  const executed = new Map<string, number>();
  const requested = new Map<string, number>();
  const invocations: Invocation[] = [];
  const requestedInvocations: Invocation[] = [];
  for (const s of ordered) {
    if (s.kind === 'tool') {
      const name = toolName(s);
      executed.set(name, (executed.get(name) ?? 0) + 1);
      invocations.push({ name, args: canonicalJson(s.tool_calls[0]?.arguments ?? s.input), span_id: s.span_id });
    } else if (s.kind === 'llm') {
      for (const c of s.tool_calls) {
        requested.set(c.name, (requested.get(c.name) ?? 0) + 1);
        requestedInvocations.push({ name: c.name, args: canonicalJson(c.arguments), span_id: s.span_id });
      }
    }
  }
  const counts: Record<string, number> = {};
  for (const name of [...new Set([...executed.keys(), ...requested.keys()])].sort())
    counts[name] = Math.max(executed.get(name) ?? 0, requested.get(name) ?? 0);
  // Requested calls stand in for tools that have no tool span of their own (executed uninstrumented).
  return { counts, invocations: [...invocations, ...requestedInvocations.filter((r) => !executed.has(r.name))] };
}

/** `repeated_call` loops: the same tool with the same arguments called 3+ times. */
function repeatedCalls(invocations: Invocation[]): DetectedLoop[] {
  const loops: DetectedLoop[] = [];
  const repeats = new Map<string, { name: string; args: string; count: number }>();
  for (const inv of invocations) {
    const k = `${inv.name}\u0000${inv.args}`;
    const r = repeats.get(k) ?? { name: inv.name, args: inv.args, count: 0 };
    r.count++;
    repeats.set(k, r);
  }
  for (const r of repeats.values())
    if (r.count >= 3)
      loops.push({
        name: r.name,
        repetitions: r.count,
        kind: 'repeated_call',
        detail: r.args.length > 200 ? `${r.args.slice(0, 200)}...` : r.args,
      });
  return loops;
}

/** `cycle` loops among the non-root call spans in start order, the longest run of each block. */
function cycles({ ordered, roots }: TraceTree): DetectedLoop[] {
  const rootSet = new Set(roots);
  const callSpans = ordered.filter((s) => CALL_KINDS.has(s.kind) && !rootSet.has(s));
  const labels = callSpans.map((s) => (s.kind === 'tool' ? toolName(s) : s.name));
  const found = new Map<string, DetectedLoop>();
  for (const c of findCycles(labels)) {
    const name = c.block.join(' -> ');
    const prev = found.get(name);
    if (!prev || c.repetitions > prev.repetitions)
      found.set(name, {
        name,
        repetitions: c.repetitions,
        kind: 'cycle',
        detail: `starts at span ${callSpans[c.start].span_id}`,
      });
  }
  return [...found.values()];
}

/** Every loop of the trace, most repetitions first (then by name). */
function detectLoops(tree: TraceTree, invocations: Invocation[]): DetectedLoop[] {
  const loops = repeatedCalls(invocations);
  loops.push(...cycles(tree));
  return loops.sort((a, b) => b.repetitions - a.repetitions || a.name.localeCompare(b.name));
}

/** Earliest start and latest end (epoch ms), and the duration: the root's when a single root covers every span. */
function traceTimes({ ordered, roots }: TraceTree): {
  startMs: number | null;
  endMs: number | null;
  duration: number | null;
} {
  const root = roots[0] ?? null;
  // Loops, not Math.min(...spans): a spread of a very large trace overflows the call stack.
  let startMs: number | null = null;
  let endMs: number | null = null;
  for (const s of ordered) {
    const [start, end] = [Date.parse(s.start_time), Date.parse(s.end_time)];
    if (startMs === null || start < startMs) startMs = start;
    if (endMs === null || end > endMs) endMs = end;
  }
  const singleCoveringRoot =
    roots.length === 1 &&
    root !== null &&
    Date.parse(root.start_time) === startMs &&
    Date.parse(root.end_time) === endMs;
  const duration =
    startMs === null || endMs === null ? null : singleCoveringRoot ? root!.duration_ms : round3(endMs - startMs);
  return { startMs, endMs, duration };
}

/** The root's value, else the earliest span's that has one. */
function firstOf(
  root: CanonicalSpan | null,
  ordered: CanonicalSpan[],
  f: (s: CanonicalSpan) => string | null,
): string | null {
  return root && f(root) !== null ? f(root) : (ordered.map(f).find((v) => v !== null) ?? null);
}

export function enrichTrace(spans: CanonicalSpan[], prices: PriceTable = DEFAULT_PRICES): TraceEnrichment {
  const tree = buildTree(spans);
  const { ordered } = tree;
  const root = tree.roots[0] ?? null;
  const depth = depthsOf(tree);
  const maxDepth = maxDepthOf(tree, depth);

  const tokenSpans = lowestCarriers(tree, hasTokens, depth);
  const tokens = tokenSums(tokenSpans);
  const costReportedRaw = sumOrNull(lowestCarriers(tree, hasCost, depth).map((s) => s.cost));
  const costReported = costReportedRaw === null ? null : round6(costReportedRaw);
  const { estimated: costEstimated, unpriced } = estimateCost(tokenSpans, prices);
  const costSource = costReported !== null ? 'reported' : costEstimated !== null ? 'estimated' : null;

  const errorSpans = ordered.filter((s) => s.status === 'error');
  const tools = toolUse(ordered);
  const loops = detectLoops(tree, tools.invocations);
  const { startMs, endMs, duration } = traceTimes(tree);

  return {
    trace_id: ordered[0]?.trace_id ?? '',
    session_id: firstOf(root, ordered, (s) => s.session_id),
    user_id: firstOf(root, ordered, (s) => s.user_id),
    root_span_name: root?.name ?? null,
    span_count: ordered.length,
    start_time: startMs === null ? null : new Date(startMs).toISOString(),
    end_time: endMs === null ? null : new Date(endMs).toISOString(),
    duration_ms: duration,
    tokens_input: tokens.input,
    tokens_output: tokens.output,
    tokens_total: tokens.total,
    cost_reported: costReported,
    cost_estimated: costEstimated,
    cost: costSource === 'reported' ? costReported : costEstimated,
    cost_source: costSource,
    unpriced_models: [...unpriced].sort(),
    error_count: errorSpans.length,
    has_error: errorSpans.length > 0,
    errors: errorSpans.slice(0, 5).map((s) => ({ span_id: s.span_id, span_name: s.name, message: s.error })),
    llm_calls: ordered.filter((s) => s.kind === 'llm').length,
    tool_calls: Object.values(tools.counts).reduce((a, b) => a + b, 0),
    tool_call_counts: tools.counts,
    retriever_calls: ordered.filter((s) => s.kind === 'retriever').length,
    max_depth: maxDepth,
    models: [...new Set(ordered.map((s) => s.model).filter((m): m is string => m !== null))].sort(),
    loop_detected: loops.length > 0,
    loops,
  };
}

/**
 * A landed span (a row's data) with only what enrichment reads: no output, attributes or
 * retrieved documents, and the input only of a tool span that records no call (its input stands
 * for the call's arguments). What the enrichment job holds of a trace, so a trace of thousands of
 * spans with long prompts is held small, not as its rows.
 */
export function compactSpan(row: Record<string, unknown>): CanonicalSpan {
  const s = row as unknown as CanonicalSpan;
  const calls = Array.isArray(s.tool_calls) ? s.tool_calls : [];
  return {
    trace_id: s.trace_id,
    span_id: s.span_id,
    parent_span_id: s.parent_span_id ?? null,
    session_id: s.session_id ?? null,
    user_id: s.user_id ?? null,
    name: s.name,
    kind: s.kind,
    start_time: s.start_time,
    end_time: s.end_time,
    duration_ms: s.duration_ms,
    status: s.status,
    error: s.error ?? null,
    input: s.kind === 'tool' && calls.length === 0 ? (s.input ?? null) : null,
    output: null,
    model: s.model ?? null,
    tokens_input: s.tokens_input ?? null,
    tokens_output: s.tokens_output ?? null,
    tokens_total: s.tokens_total ?? null,
    cost: s.cost ?? null,
    tool_calls: calls.map((c) => ({ name: c.name, arguments: c.arguments ?? null, id: c.id ?? null })),
    retrieved_documents: [],
    service_name: null,
    convention: s.convention,
    attributes: {},
  };
}

/** Groups spans by trace_id and enriches each trace. */
export function enrichTraces(spans: CanonicalSpan[], prices: PriceTable = DEFAULT_PRICES): TraceEnrichment[] {
  const groups = new Map<string, CanonicalSpan[]>();
  for (const s of spans) {
    const g = groups.get(s.trace_id);
    if (g) g.push(s);
    else groups.set(s.trace_id, [s]);
  }
  return [...groups.values()].map((g) => enrichTrace(g, prices));
}
