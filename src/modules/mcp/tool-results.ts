import type { CallToolResult } from '@modelcontextprotocol/server';
import { ApiRefusal, ToolInputError } from './mcp-api.js';

/** The longest text a tool puts in one value of an answer (a row's input, a model's output). */
export const MAX_VALUE_CHARS = 400;
/** Items of one list inside a value (a row's array column, a span's tool calls) kept in an answer. */
const MAX_LIST_ITEMS = 10;
/** Nesting kept in one value; deeper objects are summarised. */
const MAX_DEPTH = 4;

/** A string cut to `max` characters, saying how much was cut. */
export function clipText(text: string, max = MAX_VALUE_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

/**
 * A JSON value sized for a model's context: strings clipped, lists and nesting bounded, each cut
 * said where it happened; ids and numbers stay whole.
 */
export function clipValue(value: unknown, max = MAX_VALUE_CHARS, depth = 0): unknown {
  if (typeof value === 'string') return clipText(value, max);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? `[${value.length} items]` : '{…}';
  if (Array.isArray(value)) {
    const kept = value.slice(0, MAX_LIST_ITEMS).map((item) => clipValue(item, max, depth + 1));
    return value.length > MAX_LIST_ITEMS ? [...kept, `… ${value.length - MAX_LIST_ITEMS} more items`] : kept;
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clipValue(v, max, depth + 1)]));
}

/** A tool's answer: the structured content its output schema describes, and the same as JSON text for clients that read text only. */
export function answer<T extends object>(structured: T): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(structured) }],
    structuredContent: structured as Record<string, unknown>,
  };
}

/**
 * A refusal as a tool execution error (isError), so the model reads why and can correct the call:
 * the API's status, error code and detail, with the fields it named.
 */
export function refusalResult(err: ApiRefusal | ToolInputError): CallToolResult {
  if (err instanceof ToolInputError) return { isError: true, content: [{ type: 'text', text: err.message }] };
  const { error_code, title, detail, errors } = err.problem;
  const fields = Array.isArray(errors) ? ` Fields: ${JSON.stringify(clipValue(errors, 200))}` : '';
  const text = `The service refused (HTTP ${err.status}${error_code ? ` ${error_code}` : ''}): ${detail ?? title ?? ''}${fields}`;
  return { isError: true, content: [{ type: 'text', text }] };
}

/** A tool's handler with refusals turned into tool errors; anything else is a fault the protocol reports. */
export function guarded<A>(handler: (args: A) => Promise<CallToolResult>): (args: A) => Promise<CallToolResult> {
  return async (args: A) => {
    try {
      return await handler(args);
    } catch (err) {
      if (err instanceof ApiRefusal || err instanceof ToolInputError) return refusalResult(err);
      throw err;
    }
  };
}
