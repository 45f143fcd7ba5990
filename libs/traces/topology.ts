/**
 * Component graph of a set of spans: one node per (kind, name), one edge per parent component ->
 * child component. Pure: no I/O.
 *
 * Percentiles use the nearest-rank method: pN is the value at 1-based rank ceil(N/100 * n) of the
 * ascending latencies, so every reported percentile is a latency that was actually observed.
 */
import type { CanonicalSpan, SpanKind } from './span.types.js';

export type TopologySpan = Pick<
  CanonicalSpan,
  'trace_id' | 'span_id' | 'parent_span_id' | 'name' | 'kind' | 'duration_ms' | 'status' | 'service_name'
>;

export interface LatencyStats {
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface TopologyNode {
  /** `${kind}:${name}` */
  id: string;
  kind: SpanKind;
  name: string;
  /** Distinct service.name values of the node's spans (sorted) */
  service_names: string[];
  calls: number;
  errors: number;
  error_rate: number;
  latency_ms: LatencyStats;
}

export interface TopologyEdge {
  /** Parent component id */
  source: string;
  /** Child component id */
  target: string;
  /** Child spans under a parent of `source` */
  calls: number;
  /** Those child spans with status error */
  errors: number;
  error_rate: number;
  /** Latency of the child spans */
  latency_ms: LatencyStats;
}

export interface TopologyRoot {
  node: string;
  /** Spans of this component that start a trace (parent null) or are orphans */
  count: number;
  /** How many of `count` are orphans (parent id set but not among the spans) */
  orphans: number;
}

export interface TopologyGraph {
  nodes: TopologyNode[];
  edges: TopologyEdge[];
  roots: TopologyRoot[];
  trace_count: number;
  span_count: number;
  /** Spans whose parent id is set but not found in the same trace; counted as roots */
  orphan_spans: number;
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/** Nearest-rank percentile of ascending `sorted` (non-empty). */
export function nearestRank(sorted: number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

export function latencyStats(values: number[]): LatencyStats {
  if (values.length === 0) return { mean: 0, p50: 0, p95: 0, p99: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    mean: round3(sum / sorted.length),
    p50: nearestRank(sorted, 50),
    p95: nearestRank(sorted, 95),
    p99: nearestRank(sorted, 99),
    max: sorted[sorted.length - 1],
  };
}

interface Acc {
  calls: number;
  errors: number;
  latencies: number[];
}

const componentId = (s: Pick<TopologySpan, 'kind' | 'name'>): string => `${s.kind}:${s.name}`;
// Span ids are only unique within a trace, so lookups key on both.
const spanKey = (traceId: string, spanId: string): string => `${traceId}\u0000${spanId}`;

export function buildTopology(spans: TopologySpan[]): TopologyGraph {
  const byKey = new Map<string, TopologySpan>();
  for (const s of spans) byKey.set(spanKey(s.trace_id, s.span_id), s);

  const nodes = new Map<string, Acc & { kind: SpanKind; name: string; services: Set<string> }>();
  const edges = new Map<string, Acc & { source: string; target: string }>();
  const roots = new Map<string, { count: number; orphans: number }>();
  const traces = new Set<string>();
  let orphanSpans = 0;

  for (const s of spans) {
    traces.add(s.trace_id);
    const id = componentId(s);
    const isError = s.status === 'error';
    let node = nodes.get(id);
    if (!node) {
      node = { kind: s.kind, name: s.name, services: new Set(), calls: 0, errors: 0, latencies: [] };
      nodes.set(id, node);
    }
    node.calls++;
    if (isError) node.errors++;
    node.latencies.push(s.duration_ms);
    if (s.service_name) node.services.add(s.service_name);

    // A self-parented span is malformed; treating it as an orphan keeps it visible as a root.
    const parent =
      s.parent_span_id && s.parent_span_id !== s.span_id ? byKey.get(spanKey(s.trace_id, s.parent_span_id)) : undefined;
    if (!parent) {
      const orphan = s.parent_span_id !== null && s.parent_span_id !== '';
      if (orphan) orphanSpans++;
      const r = roots.get(id) ?? { count: 0, orphans: 0 };
      r.count++;
      if (orphan) r.orphans++;
      roots.set(id, r);
      continue;
    }
    const source = componentId(parent);
    const ek = `${source}\u0000${id}`;
    let edge = edges.get(ek);
    if (!edge) {
      edge = { source, target: id, calls: 0, errors: 0, latencies: [] };
      edges.set(ek, edge);
    }
    edge.calls++;
    if (isError) edge.errors++;
    edge.latencies.push(s.duration_ms);
  }

  const rate = (errors: number, calls: number): number => (calls === 0 ? 0 : round3(errors / calls));
  return {
    nodes: [...nodes.entries()]
      .map(([id, n]) => ({
        id,
        kind: n.kind,
        name: n.name,
        service_names: [...n.services].sort(),
        calls: n.calls,
        errors: n.errors,
        error_rate: rate(n.errors, n.calls),
        latency_ms: latencyStats(n.latencies),
      }))
      .sort((a, b) => b.calls - a.calls || a.id.localeCompare(b.id)),
    edges: [...edges.values()]
      .map((e) => ({
        source: e.source,
        target: e.target,
        calls: e.calls,
        errors: e.errors,
        error_rate: rate(e.errors, e.calls),
        latency_ms: latencyStats(e.latencies),
      }))
      .sort((a, b) => b.calls - a.calls || a.source.localeCompare(b.source) || a.target.localeCompare(b.target)),
    roots: [...roots.entries()]
      .map(([node, r]) => ({ node, count: r.count, orphans: r.orphans }))
      .sort((a, b) => b.count - a.count || a.node.localeCompare(b.node)),
    trace_count: traces.size,
    span_count: spans.length,
    orphan_spans: orphanSpans,
  };
}
