/**
 * An OpenAI-compatible model that calls tools, as agents' tests need one: for each task it
 * answers with the plan's next round of tool calls (by how many assistant tool-call turns the
 * conversation already holds), then with the plan's final answer. Served by a FakeUpstream at
 * `POST /v1/chat/completions`, so the `openai` client and the service's own clients reach it.
 */
import { FakeUpstream, type RecordedRequest, type Reply } from './fake-upstream.js';

export interface PlannedCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface AgentPlan {
  /** Rounds of tool calls, each answered by one assistant message holding all the round's calls. */
  rounds: PlannedCall[][];
  answer: string;
}

interface ChatBody {
  model?: string;
  messages?: Array<{ role: string; content?: unknown; tool_calls?: unknown[] }>;
}

/** The task of a conversation: its first user message's text. */
export function taskOf(body: ChatBody): string {
  const first = (body.messages ?? []).find((m) => m.role === 'user');
  return typeof first?.content === 'string' ? first.content : JSON.stringify(first?.content ?? '');
}

/** The chat completion a tool-calling model gives this conversation under the plan. */
export function toolCallingReply(body: ChatBody, plan: AgentPlan, callIds: { next: number }): Reply {
  const done = (body.messages ?? []).filter((m) => m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0).length;
  const usage = { prompt_tokens: 20 + 5 * done, completion_tokens: 7, total_tokens: 27 + 5 * done };
  const base = {
    id: `chatcmpl-${callIds.next}`,
    object: 'chat.completion',
    created: 1_764_000_000,
    model: body.model ?? 'fake-agent-model',
    usage,
  };
  if (done < plan.rounds.length) {
    const tool_calls = plan.rounds[done].map((c) => ({
      id: `call_${callIds.next++}`,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
    return {
      json: {
        ...base,
        choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls }, finish_reason: 'tool_calls' }],
      },
    };
  }
  return {
    json: {
      ...base,
      choices: [{ index: 0, message: { role: 'assistant', content: plan.answer }, finish_reason: 'stop' }],
    },
  };
}

/** A model at `<url>/v1` whose plan for each task `planFor` gives (by the task's text). */
export async function toolCallingModel(planFor: (task: string) => AgentPlan): Promise<FakeUpstream> {
  const ids = { next: 1 };
  const upstream = await FakeUpstream.start();
  upstream.on('POST', '/v1/chat/completions', (req: RecordedRequest) => {
    const body = req.body as ChatBody;
    return toolCallingReply(body, planFor(taskOf(body)), ids);
  });
  return upstream;
}
