import { request, type IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { readServerSentEvents, type SseMessage } from '../../sdk/typescript/src/events.js';

export type { SseMessage };

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
 * A client of a text/event-stream response over a raw HTTP connection (which the test can cut),
 * parsed by the SDK's reader, which follows the WHATWG EventSource rules.
 */
export function openEventStream(
  baseUrl: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<EventStreamClient> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, baseUrl), { headers: { Accept: 'text/event-stream', ...headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      let raw = '';
      let byServer = false;
      let closedByClient = false;
      const waiters = new Set<() => void>();
      const notify = () => {
        for (const check of [...waiters]) check();
      };
      let finish!: () => void;
      const ended = new Promise<void>((done) => (finish = done));
      const end = () => {
        byServer = !closedByClient;
        notify();
        finish();
      };
      const client: EventStreamClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        messages: [],
        comments: [],
        text: () => raw,
        ended,
        endedByServer: () => byServer,
        until: (predicate, ms = 30_000) =>
          new Promise<void>((ok, fail) => {
            if (predicate(client)) return ok();
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(
                new Error(
                  `the stream did not reach the expected state within ${ms} ms; got ${JSON.stringify(client.messages.map((m) => m.event))}`,
                ),
              );
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
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        const body = Readable.toWeb(res) as ReadableStream<Uint8Array>;
        // Ended once the reader has parsed every message the server sent (or the client cut it).
        void (async () => {
          for await (const message of readServerSentEvents(body, {
            onComment: (text) => (client.comments.push(text), notify()),
          })) {
            client.messages.push(message);
            notify();
          }
        })()
          .catch(() => undefined)
          .finally(end);
      } else {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (raw += chunk));
        res.on('end', end);
        res.on('close', end);
      }
      resolve(client);
    });
    req.end();
  });
}
