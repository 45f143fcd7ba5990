import type { Response } from 'express';
import { endOnDrain } from './http-drain.js';
import { requestPressure } from './request-pressure.js';

/** Where a service sends a stream of events, free of HTTP: the Server-Sent Events response behind it is the controller's. */
export interface EventSink {
  /** Sends the headers: from here on failures can no longer be answered with a status. */
  start(): void;
  /** One message; resolves once the socket took it (waits while a slow client's buffer is full). */
  send(id: string, event: string, data: unknown): Promise<void>;
  /** A comment line that keeps proxies from closing an idle connection. */
  heartbeat(): void;
  end(): void;
  /** Aborted when the client disconnects or the server shuts down. */
  readonly closed: AbortSignal;
}

/**
 * A `text/event-stream` response (the WHATWG Server-Sent Events format): `id:`, `event:` and
 * one `data:` line of JSON per message, comments as heartbeats, no caching or proxy buffering.
 * It ends when the client goes and when a shutdown drains the server.
 */
export class SseResponse implements EventSink {
  private readonly abort = new AbortController();

  constructor(private readonly res: Response) {
    const close = () => this.abort.abort();
    res.once('close', close);
    endOnDrain(res, () => {
      close();
      this.end();
    });
  }

  get closed(): AbortSignal {
    return this.abort.signal;
  }

  start(): void {
    this.res.status(200);
    this.res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    this.res.setHeader('Cache-Control', 'no-cache, no-transform');
    // nginx buffers responses unless told not to.
    this.res.setHeader('X-Accel-Buffering', 'no');
    this.res.flushHeaders();
    this.res.socket?.setNoDelay(true);
    // Open for as long as the client follows: not a request waiting to be served.
    requestPressure.end(this.res);
  }

  async send(id: string, event: string, data: unknown): Promise<void> {
    // JSON.stringify writes no raw line breaks, so the data is one `data:` line.
    if (this.write(`id: ${oneLine(id)}\nevent: ${oneLine(event)}\ndata: ${JSON.stringify(data)}\n\n`)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.closed.removeEventListener('abort', done);
        resolve();
      };
      this.res.once('drain', done);
      this.closed.addEventListener('abort', done, { once: true });
    });
  }

  heartbeat(): void {
    this.write(': heartbeat\n\n');
  }

  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }

  private write(chunk: string): boolean {
    if (this.closed.aborted || this.res.writableEnded) return true;
    return this.res.write(chunk);
  }
}

function oneLine(value: string): string {
  return value.replace(/[\r\n]/g, ' ');
}
