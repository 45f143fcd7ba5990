import { type Dispatcher, request } from 'undici';

/** One request to the service's own HTTP API, as a protocol adapter composes them. */
export interface LoopbackRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The path as the OpenAPI document spells it, ids filled in (encoded by the caller). */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
}

export interface LoopbackAnswer {
  status: number;
  /** The parsed JSON body, the text of any other body, or undefined when there was none. */
  body: unknown;
}

/** Who calls, and where this process answers: the served request's credentials and local address. */
export interface LoopbackCaller {
  /** The origin of this process's own listener, as the served request reached it (http://127.0.0.1:3000). */
  origin: string;
  authorization: string;
  /** Prefix of each request's X-Request-Id: the served request's id, so access lines correlate. */
  requestId?: string;
  userAgent?: string;
}

/** Upper bound of one call: a tool never waits longer on one operation than a client waits on the tool. */
const CALL_TIMEOUT_MS = 60_000;

/**
 * Sends requests to this process's own HTTP listener, with the credentials of the caller a
 * protocol adapter serves: the same middleware, body limits, access guard, roles, validation,
 * audit and problem+json answers as any client's (the MCP server's tools are compositions of API
 * operations: docs/decisions/0023-mcp-over-the-api.md). A socket, not a simulated request:
 * Express binds its request prototype per application, and a simulated request would have to
 * change it for every request of the process.
 */
export class LoopbackClient {
  private sent = 0;

  /** `dispatcher`: the connection pool the owner keeps (and closes when the process stops). */
  constructor(
    private readonly caller: LoopbackCaller,
    private readonly dispatcher: Dispatcher,
  ) {}

  async send(call: LoopbackRequest): Promise<LoopbackAnswer> {
    const url = new URL(call.path, this.caller.origin);
    for (const [name, value] of Object.entries(call.query ?? {}))
      if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { authorization: this.caller.authorization, accept: 'application/json' };
    if (this.caller.userAgent) headers['user-agent'] = this.caller.userAgent;
    if (this.caller.requestId) headers['x-request-id'] = `${this.caller.requestId}.${++this.sent}`;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const response = await request(url, {
      method: call.method,
      headers,
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      dispatcher: this.dispatcher,
      headersTimeout: CALL_TIMEOUT_MS,
      bodyTimeout: CALL_TIMEOUT_MS,
    });
    const text = await response.body.text();
    const json = /json/.test(String(response.headers['content-type'] ?? ''));
    return { status: response.statusCode, body: text === '' ? undefined : json ? JSON.parse(text) : text };
  }
}

/** The origin a local socket answers on: its address (an IPv4-mapped one as IPv4, IPv6 bracketed) and port. */
export function originOf(socket: { localAddress?: string; localPort?: number }): string {
  let address = socket.localAddress ?? '127.0.0.1';
  if (address.startsWith('::ffff:')) address = address.slice('::ffff:'.length);
  return `http://${address.includes(':') ? `[${address}]` : address}:${socket.localPort ?? 80}`;
}
