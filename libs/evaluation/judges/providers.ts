/**
 * The wire format of each judge provider: how a chat request is sent and where the answer
 * text and token usage are found in the reply.
 */
import type { JudgeConnection, JudgeCredential } from './judge.types.js';

export interface JudgeMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ProviderRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface JudgeUsage {
  prompt_tokens: number | null;
  completion_tokens: number | null;
}

export type ProviderAnswer = { ok: true; text: string; usage: JudgeUsage } | { ok: false; message: string };

const DEFAULT_MAX_TOKENS = 512;
const DEFAULT_AZURE_API_VERSION = '2024-10-21';
const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic has no JSON mode: the assistant turn is started with this and the model continues it. */
const JSON_PREFILL = '{';

export function buildJudgeRequest(
  conn: JudgeConnection,
  key: JudgeCredential,
  messages: JudgeMessage[],
): ProviderRequest {
  const base = conn.base_url.replace(/\/+$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  const jsonFormat = conn.json_mode ? { response_format: { type: 'json_object' } } : {};
  switch (conn.provider) {
    case 'openai_compatible': {
      if (key) headers.authorization = `Bearer ${key}`;
      const body = { max_tokens: DEFAULT_MAX_TOKENS, ...conn.parameters, model: conn.model, messages, ...jsonFormat };
      return { url: `${base}/chat/completions`, headers, body: JSON.stringify(body) };
    }
    case 'azure_openai': {
      if (key) headers['api-key'] = key;
      const apiVersion = encodeURIComponent(conn.api_version ?? DEFAULT_AZURE_API_VERSION);
      const body = { max_tokens: DEFAULT_MAX_TOKENS, ...conn.parameters, messages, ...jsonFormat };
      return {
        url: `${base}/openai/deployments/${encodeURIComponent(conn.model)}/chat/completions?api-version=${apiVersion}`,
        headers,
        body: JSON.stringify(body),
      };
    }
    case 'anthropic': {
      if (key) headers['x-api-key'] = key;
      headers['anthropic-version'] = ANTHROPIC_VERSION;
      const system = messages
        .filter((m) => m.role === 'system')
        .map((m) => m.content)
        .join('\n\n');
      const turns = messages.filter((m) => m.role !== 'system').map(({ role, content }) => ({ role, content }));
      if (conn.json_mode) turns.push({ role: 'assistant', content: JSON_PREFILL });
      const body = {
        max_tokens: DEFAULT_MAX_TOKENS,
        ...conn.parameters,
        model: conn.model,
        ...(system ? { system } : {}),
        messages: turns,
      };
      return { url: `${base}/v1/messages`, headers, body: JSON.stringify(body) };
    }
  }
}

export function parseJudgeResponse(conn: JudgeConnection, body: string): ProviderAnswer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { ok: false, message: 'the judge answered with a body that is not JSON' };
  }
  if (!isRecord(parsed)) return { ok: false, message: 'the judge answered with JSON that is not an object' };
  return conn.provider === 'anthropic' ? parseAnthropic(parsed, conn.json_mode) : parseChatCompletion(parsed);
}

function parseChatCompletion(body: Record<string, unknown>): ProviderAnswer {
  const choice = Array.isArray(body.choices) ? body.choices[0] : undefined;
  const message = isRecord(choice) ? choice.message : undefined;
  const content = isRecord(message) ? message.content : undefined;
  if (typeof content !== 'string')
    return { ok: false, message: 'the judge answer has no text at choices[0].message.content' };
  const usage = isRecord(body.usage) ? body.usage : {};
  return {
    ok: true,
    text: content,
    usage: {
      prompt_tokens: numberOrNull(usage.prompt_tokens),
      completion_tokens: numberOrNull(usage.completion_tokens),
    },
  };
}

function parseAnthropic(body: Record<string, unknown>, jsonMode: boolean): ProviderAnswer {
  const blocks = Array.isArray(body.content)
    ? body.content.filter(
        (b): b is Record<string, unknown> => isRecord(b) && b.type === 'text' && typeof b.text === 'string',
      )
    : [];
  if (blocks.length === 0) return { ok: false, message: 'the judge answer has no text block in content[]' };
  const text = blocks.map((b) => b.text).join('');
  const usage = isRecord(body.usage) ? body.usage : {};
  return {
    ok: true,
    text: jsonMode ? JSON_PREFILL + text : text,
    usage: { prompt_tokens: numberOrNull(usage.input_tokens), completion_tokens: numberOrNull(usage.output_tokens) },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
