/**
 * The trajectory a SUT's answer shows: an OpenAI-compatible completion's tool calls, or an
 * agent endpoint's own list of steps (found by the adapter's `response.trajectory` path), in
 * the shapes agent frameworks return them. Bounded before it is stored with the run's item.
 */
import { parseArguments } from '../trajectory/tool-calls.js';
import { STEP_TYPES, type StepType, type Trajectory, type TrajectoryStep } from '../trajectory/trajectory.types.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const TYPE_SYNONYMS: Record<string, StepType> = {
  tool: 'tool_call',
  tool_use: 'tool_call',
  function: 'tool_call',
  function_call: 'tool_call',
  model: 'llm',
  generation: 'llm',
  chat: 'llm',
  retriever: 'retrieval',
};

function stepType(value: unknown): StepType {
  if (typeof value !== 'string') return 'tool_call';
  const type = value.toLowerCase();
  return (STEP_TYPES as readonly string[]).includes(type) ? (type as StepType) : (TYPE_SYNONYMS[type] ?? 'other');
}

function text(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (isRecord(value) && typeof value.message === 'string') return value.message;
  return JSON.stringify(value);
}

const firstDefined = (...values: unknown[]) => values.find((v) => v !== undefined && v !== null);

/** One OpenAI tool call (`{id, type: 'function', function: {name, arguments}}`) as a step. */
function chatToolCall(call: unknown): TrajectoryStep | null {
  if (!isRecord(call)) return null;
  const fn = isRecord(call.function) ? call.function : call;
  if (typeof fn.name !== 'string') return null;
  return {
    type: 'tool_call',
    name: fn.name,
    arguments: parseArguments(fn.arguments ?? null),
    call_id: typeof call.id === 'string' ? call.id : null,
  };
}

/** The tool calls of a chat completion's first choice, in order; null when the body is not a completion. */
export function chatCompletionTrajectory(body: unknown): Trajectory | null {
  const message =
    isRecord(body) && Array.isArray(body.choices) ? (body.choices[0] as { message?: unknown })?.message : null;
  if (!isRecord(message)) return null;
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  return { source: 'response', steps: calls.map(chatToolCall).filter((s): s is TrajectoryStep => s !== null) };
}

/** An OpenAI message list: assistant turns' tool calls, tool results joined by tool_call_id, assistant text as llm steps. */
function messagesTrajectory(messages: Array<Record<string, unknown>>): TrajectoryStep[] {
  const steps: TrajectoryStep[] = [];
  const byCallId = new Map<string, TrajectoryStep>();
  for (const message of messages) {
    if (message.role === 'assistant') {
      if (typeof message.content === 'string' && message.content.trim())
        steps.push({
          type: 'llm',
          name: typeof message.name === 'string' ? message.name : 'assistant',
          output: message.content,
        });
      for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
        const step = chatToolCall(call);
        if (!step) continue;
        steps.push(step);
        if (step.call_id) byCallId.set(step.call_id, step);
      }
    } else if (message.role === 'tool' && typeof message.tool_call_id === 'string') {
      const step = byCallId.get(message.tool_call_id);
      if (step) step.output = parseArguments(message.content ?? null);
    }
  }
  return steps;
}

/** One step of an agent endpoint: `{type?, name|tool|tool_name|function.name, arguments|args|input|function.arguments, output|result, error}`. */
function agentStep(item: unknown, index: number): TrajectoryStep | string {
  if (!isRecord(item)) return `step ${index} is ${JSON.stringify(item)?.slice(0, 80)}, not an object`;
  const fn = isRecord(item.function) ? item.function : {};
  const name = firstDefined(item.name, item.tool, item.tool_name, fn.name);
  if (typeof name !== 'string' || !name) return `step ${index} has no name (name, tool, tool_name or function.name)`;
  const step: TrajectoryStep = { type: stepType(item.type), name };
  const args = firstDefined(item.arguments, item.args, item.input, fn.arguments);
  if (args !== undefined) step.arguments = parseArguments(args);
  const output = firstDefined(item.output, item.result);
  if (output !== undefined) step.output = output;
  const error = text(item.error);
  if (error !== null) step.error = error;
  const callId = firstDefined(item.call_id, item.id, item.tool_call_id);
  if (typeof callId === 'string') step.call_id = callId;
  if (typeof item.duration_ms === 'number') step.duration_ms = item.duration_ms;
  if (typeof item.start_time === 'string') step.start_time = item.start_time;
  return step;
}

/** The steps an agent endpoint returned (a list of steps, or of OpenAI chat messages), or why they cannot be read. */
export function stepsTrajectory(value: unknown): { trajectory: Trajectory } | { error: string } {
  if (!Array.isArray(value)) return { error: `is ${value === null ? 'null' : typeof value}, not a list of steps` };
  if (value.length && value.every((m) => isRecord(m) && typeof m.role === 'string'))
    return { trajectory: { source: 'response', steps: messagesTrajectory(value as Array<Record<string, unknown>>) } };
  const steps: TrajectoryStep[] = [];
  for (const [index, item] of value.entries()) {
    const step = agentStep(item, index);
    if (typeof step === 'string') return { error: step };
    steps.push(step);
  }
  return { trajectory: { source: 'response', steps } };
}

/** A chat completion's output when the model answered with tool calls only: the calls, as JSON text of `[{name, arguments}]`. */
export function toolCallsText(trajectory: Trajectory): string | null {
  const calls = trajectory.steps.filter((s) => s.type === 'tool_call');
  return calls.length ? JSON.stringify(calls.map((c) => ({ name: c.name, arguments: c.arguments ?? null }))) : null;
}
