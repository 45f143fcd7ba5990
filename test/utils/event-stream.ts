import { request, type IncomingHttpHeaders } from 'node:http';

/** One Server-Sent Events message as a browser's EventSource sees it. */
export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

export interface EventStreamClient {
  status: number;
  headers: IncomingHttpHeaders;
  /** The messages received so far, in order. */
  messages: SseMessage[];
  /** Comment lines received so far (heartbeats). */
  comments: string[];
  /** The body as text when the answer is not a stream (a problem). */
  text(): string;
  /** Resolves when the server ended the response (or the client closed it). */
  ended: Promise<void>;
  /** Whether the server ended it (not the client). */
  endedByServer(): boolean;
  /** Waits until `predicate` holds for the messages (and comments) received, within `ms`. */
  until(predicate: (stream: EventStreamClient) => boolean, ms?: number): Promise<void>;
  /** Disconnects, as a closed browser tab does. */
  close(): void;
}

/**
 * A client of a text/event-stream response over a raw HTTP connection, parsed as the WHATWG
 * EventSource parses it (fields `id`, `event`, `data`; `:` comments; a blank line ends a message).
 */
export function openEventStream(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<EventStreamClient> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, baseUrl), { headers: { Accept: 'text/event-stream', ...headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      res.setEncoding('utf8');
      let buffer = '';
      let raw = '';
      let byServer = false;
      let closedByClient = false;
      const waiters = new Set<() => void>();
      const client: EventStreamClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        messages: [],
        comments: [],
        text: () => raw,
        ended: new Promise<void>((done) => {
          res.on('end', () => {
            byServer = !closedByClient;
            done();
          });
          res.on('close', () => done());
        }),
        endedByServer: () => byServer,
        until: (predicate, ms = 30_000) =>
          new Promise<void>((ok, fail) => {
            if (predicate(client)) return ok();
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`the stream did not reach the expected state within ${ms} ms; got ${JSON.stringify(client.messages.map((m) => m.event))}`));
            }, ms);
            const check = () => {
              if (!predicate(client)) return;
              clearTimeout(timer);
              waiters.delete(check);
              ok();
            };
            waiters.add(check);
          }),
        close: () => {
          closedByClient = true;
          req.destroy();
        },
      };
      res.on('data', (chunk: string) => {
        raw += chunk;
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.search(/\r?\n\r?\n/)) !== -1) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + (buffer[cut] === '\r' ? 4 : 2));
          const message: SseMessage = { data: '' };
          const data: string[] = [];
          for (const line of block.split(/\r?\n/)) {
            if (line.startsWith(':')) client.comments.push(line.slice(1).trim());
            else {
              const colon = line.indexOf(':');
              const field = colon === -1 ? line : line.slice(0, colon);
              const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
              if (field === 'id') message.id = value;
              else if (field === 'event') message.event = value;
              else if (field === 'data') data.push(value);
            }
          }
          if (data.length || message.id !== undefined || message.event !== undefined) client.messages.push({ ...message, data: data.join('\n') });
        }
        for (const check of [...waiters]) check();
      });
      res.on('end', () => {
        for (const check of [...waiters]) check();
      });
      resolve(client);
    });
    req.end();
  });
}
