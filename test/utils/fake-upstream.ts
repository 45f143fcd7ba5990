import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path with its query string. */
  url: string;
  headers: IncomingMessage['headers'];
  /** Parsed JSON, or the raw text when it is not JSON. */
  body: unknown;
}

export interface Reply {
  status?: number;
  json?: unknown;
  text?: string;
  headers?: Record<string, string>;
  /** Answer after this long (a slow upstream). */
  delayMs?: number;
  /** Answer once this settles (an upstream the test holds, then lets go). */
  until?: Promise<unknown>;
}

type Handler = (req: RecordedRequest, nth: number) => Reply;

/**
 * A local HTTP server that plays an external system (a SUT, an LLM provider, a custom op):
 * routes answer with scripted replies, and every request is recorded for assertions.
 */
export class FakeUpstream {
  readonly requests: RecordedRequest[] = [];
  private readonly routes = new Map<string, { handler: Handler; calls: number }>();
  private readonly open = new Set<ServerResponse>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakeUpstream> {
    const server = createServer();
    const upstream = new FakeUpstream(server);
    server.on('request', (req, res) => void upstream.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return upstream;
  }

  url(path = ''): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  /** Answers `method path` (path without query) with the handler's reply; the handler sees the call's index. */
  on(method: string, path: string, handler: Handler | Reply): this {
    this.routes.set(`${method} ${path}`, {
      handler: typeof handler === 'function' ? handler : () => handler,
      calls: 0,
    });
    return this;
  }

  received(method: string, path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && r.url.split('?')[0] === path);
  }

  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const recorded: RecordedRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body };
    this.requests.push(recorded);
    const route = this.routes.get(`${recorded.method} ${recorded.url.split('?')[0]}`);
    const reply: Reply = route
      ? route.handler(recorded, route.calls++)
      : { status: 404, json: { error: 'no such route' } };
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (reply.until) await reply.until.catch(() => undefined);
    if (res.destroyed) return;
    const payload = reply.json !== undefined ? JSON.stringify(reply.json) : (reply.text ?? '');
    res.writeHead(reply.status ?? 200, {
      'content-type': reply.json !== undefined ? 'application/json' : 'text/plain',
      ...reply.headers,
    });
    res.end(payload);
  }
}

/** An OpenAI-compatible chat completion body. */
export function chatCompletion(content: string, usage = { prompt_tokens: 12, completion_tokens: 5 }): unknown {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}
