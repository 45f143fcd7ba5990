/**
 * What an agent did to reach its answer: its model calls and tool calls in order. Read from the
 * SUT's answer (OpenAI-compatible tool calls, an agent endpoint's own steps) or from the SUT's own
 * trace (its spans, joined to the run's row by the W3C trace id the call carried). Trajectory
 * metrics score it against the calls a dataset row expects. Snake-case members: stored and
 * served as JSON (a run item's `trajectory`).
 */

export const STEP_TYPES = ['tool_call', 'llm', 'agent', 'retrieval', 'other'] as const;
export type StepType = (typeof STEP_TYPES)[number];

export const TRAJECTORY_SOURCES = ['response', 'trace'] as const;
export type TrajectorySource = (typeof TRAJECTORY_SOURCES)[number];

export interface TrajectoryStep {
  type: StepType;
  /** The tool's name for a tool call; the model, agent or span name otherwise. */
  name: string;
  /** A tool call's arguments, parsed when they were JSON text (null when it had none). */
  arguments?: unknown;
  /** What the step returned (a tool's result, a model's text), when known. */
  output?: unknown;
  /** Why the step failed; null or absent when it did not. */
  error?: string | null;
  /** The tool call's own id (OpenAI `tool_calls[].id`), when the source gives one. */
  call_id?: string | null;
  /** The span the step was read from (trajectories from a trace). */
  span_id?: string | null;
  /** The MCP server a tool call went through, when it went through one. */
  mcp_server?: string | null;
  /** ISO 8601 start, when known. */
  start_time?: string | null;
  duration_ms?: number | null;
}

export interface Trajectory {
  source: TrajectorySource;
  steps: TrajectoryStep[];
  /** The trace it was read from. */
  trace_id?: string | null;
  /** Steps left out beyond the stored bound (the first steps are kept). */
  truncated?: number;
}

/** A trajectory's tool calls, in order. */
export function toolCalls(trajectory: Trajectory | null | undefined): TrajectoryStep[] {
  return trajectory ? trajectory.steps.filter((s) => s.type === 'tool_call') : [];
}

/** Steps stored per item at most (the first ones are kept; `truncated` counts the rest). */
export const MAX_STORED_STEPS = 1000;
/** Characters of a step's arguments, output or error (as JSON text when not text) kept in storage. */
export const MAX_STORED_VALUE_CHARS = 8000;
const MAX_NAME_CHARS = 200;

function boundValue(value: unknown): unknown {
  if (value === undefined || value === null) return value;
  const json = typeof value === 'string' ? value : JSON.stringify(value);
  if (json.length <= MAX_STORED_VALUE_CHARS) return value;
  return `${json.slice(0, MAX_STORED_VALUE_CHARS)}… (+${json.length - MAX_STORED_VALUE_CHARS} chars)`;
}

/** The trajectory as stored: at most MAX_STORED_STEPS steps, each value at most MAX_STORED_VALUE_CHARS characters. */
export function boundTrajectory(trajectory: Trajectory): Trajectory {
  const kept = trajectory.steps.slice(0, MAX_STORED_STEPS).map((step) => {
    const bounded: TrajectoryStep = { ...step, name: step.name.slice(0, MAX_NAME_CHARS) };
    for (const key of ['arguments', 'output', 'error'] as const)
      if (step[key] !== undefined) (bounded as unknown as Record<string, unknown>)[key] = boundValue(step[key]);
    return bounded;
  });
  const dropped = trajectory.steps.length - kept.length + (trajectory.truncated ?? 0);
  return { ...trajectory, steps: kept, ...(dropped ? { truncated: dropped } : {}) };
}
