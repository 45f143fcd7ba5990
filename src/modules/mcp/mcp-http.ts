import { DomainError } from '#libs/common/domain-error.js';
import { CommonErrors } from '#libs/common/error-codes.js';
import { buildProblem, PROBLEM_CONTENT_TYPE } from '#libs/common/problem.js';
import { McpErrors } from './mcp.errors.js';

/** The error code of each status the MCP transport refuses a message with. */
const REFUSALS: Record<number, string> = {
  406: McpErrors.mcp_not_acceptable,
  413: CommonErrors.payload_too_large,
  415: CommonErrors.unsupported_media_type,
};

/**
 * The MCP transport's refusal of a message (a 4xx whose body is a JSON-RPC error without an id)
 * as problem+json, like every refusal of the service, that stays a JSON-RPC error response:
 * `jsonrpc`, `id` and `error` are kept beside the problem's members. Other answers pass as they are.
 */
export async function refusalAsProblem(response: Response): Promise<Response> {
  if (response.status < 400 || response.status >= 500) return response;
  const text = await response.text();
  let rpc: { id?: unknown; error?: { code: number; message: string } } = {};
  try {
    rpc = JSON.parse(text) as typeof rpc;
  } catch {
    // Not JSON: the text is the detail.
  }
  const detail = rpc.error?.message ?? (text || `HTTP ${response.status}`);
  const problem = {
    ...buildProblem(REFUSALS[response.status] ?? McpErrors.mcp_message_invalid, detail),
    status: response.status,
    jsonrpc: '2.0',
    id: rpc.id ?? null,
    error: rpc.error ?? { code: -32600, message: detail },
  };
  const headers = new Headers(response.headers);
  headers.set('content-type', PROBLEM_CONTENT_TYPE);
  headers.delete('content-length');
  return new Response(JSON.stringify(problem), { status: response.status, headers });
}

/** The members a JSON-RPC 2.0 message has (request, notification, response). */
const MESSAGE_MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params', 'result', 'error']);

/**
 * A body whose message (or a message of its batch) carries a member no JSON-RPC message has, or
 * an `id` or `method` past its documented bound, refused before the transport reads it: 400 mcp_message_invalid naming the member, as the
 * service names every member it refuses, and a JSON-RPC error response as well.
 */
export function refuseStrayMembers(body: unknown): void {
  const messages = Array.isArray(body) ? body : [body];
  for (const [i, message] of messages.entries()) {
    if (!message || typeof message !== 'object' || Array.isArray(message)) continue;
    const at = (member: string) => (Array.isArray(body) ? `[${i}].${member}` : member);
    const stray = Object.keys(message).find((member) => !MESSAGE_MEMBERS.has(member));
    if (stray !== undefined)
      refuse(at(stray), 'not a member of a JSON-RPC message (jsonrpc, id, method, params, result, error)');
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (typeof id === 'string' && id.length > MCP_TEXT_MAX)
      refuse(at('id'), `must be at most ${MCP_TEXT_MAX} characters`);
    if (typeof id === 'number' && !Number.isSafeInteger(id)) refuse(at('id'), 'must be an integer within ±(2^53 - 1)');
    if (typeof method === 'string' && method.length > MCP_TEXT_MAX)
      refuse(at('method'), `must be at most ${MCP_TEXT_MAX} characters`);
  }
}

/** The longest `id` or `method` text a message may carry (the document's `maxLength`). */
export const MCP_TEXT_MAX = 200;

function refuse(field: string, message: string): never {
  const detail = `${field} ${message}`;
  throw new DomainError(McpErrors.mcp_message_invalid, detail, {
    errors: [{ field, message }],
    jsonrpc: '2.0',
    id: null,
    error: { code: -32600, message: detail },
  });
}
