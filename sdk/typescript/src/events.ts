import type { RunEventResponse } from './generated/api.js';

/** One Server-Sent Events message. */
export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Reads a `text/event-stream` body as the WHATWG EventSource does: `id`, `event` and `data`
 * fields (several `data` lines joined by a line break), `:` comments skipped, a blank line
 * ending a message; `onComment` hears the comments (heartbeats).
 */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
  options: { onComment?: (text: string) => void } = {},
): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let message: SseMessage = { data: '' };
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.search(/\r\n|\r|\n/)) !== -1) {
        const line = buffer.slice(0, cut);
        buffer = buffer.slice(cut + (buffer.startsWith('\r\n', cut) ? 2 : 1));
        if (line === '') {
          if (data.length || message.id !== undefined || message.event !== undefined)
            yield { ...message, data: data.join('\n') };
          message = { data: '' };
          data = [];
          continue;
        }
        if (line.startsWith(':')) {
          options.onComment?.(line.slice(1).trim());
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') message.id = value;
        else if (field === 'event') message.event = value;
        else if (field === 'data') data.push(value);
      }
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

export interface FollowOptions {
  /** Start after this event `seq` (default: from the first event). */
  after?: number;
  /** Reconnections in a row without a new event before giving up (default 5). */
  reconnects?: number;
  /** Stops following (the stream is closed). */
  signal?: AbortSignal;
}

export const TERMINAL_RUN_STATES: readonly string[] = ['succeeded', 'failed', 'cancelled'];

/** Whether an event is the one of a run's terminal state. */
export function isTerminalRunEvent(event: RunEventResponse): boolean {
  return event.type === 'state_changed' && TERMINAL_RUN_STATES.includes(String((event.data as { to?: unknown }).to));
}

/**
 * What the client needs to follow a run: open the stream after a cursor, and ask whether the run
 * has ended (after a stream ended without its terminal event, e.g. a server shutting down).
 */
export interface RunEventSource {
  open(runId: string, lastEventId: string | undefined, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>>;
  ended(runId: string): Promise<boolean>;
}

/**
 * The events of a run as they happen (GET /runs/{run_id}/events/stream), until the event of its
 * terminal state: reconnects after a lost connection with `Last-Event-ID`, so no event is missed
 * or repeated.
 */
export async function* followRunEvents(
  source: RunEventSource,
  runId: string,
  options: FollowOptions = {},
): AsyncGenerator<RunEventResponse> {
  let lastEventId = options.after !== undefined ? String(options.after) : undefined;
  const budget = options.reconnects ?? 5;
  let failures = 0;
  for (;;) {
    let progressed = false;
    let failure: unknown;
    try {
      const body = await source.open(runId, lastEventId, options.signal);
      for await (const message of readServerSentEvents(body)) {
        if (message.id !== undefined) lastEventId = message.id;
        if (!message.data) continue;
        const event = JSON.parse(message.data) as RunEventResponse;
        progressed = true;
        yield event;
        if (isTerminalRunEvent(event)) return;
      }
      // The server ended the stream without the terminal event: the run had ended before (nothing left after the cursor), or the server is shutting down.
      if (await source.ended(runId)) return;
    } catch (err) {
      if (options.signal?.aborted || isClientError(err)) throw err;
      failure = err;
    }
    if (progressed) failures = 0;
    else if (++failures > budget)
      throw failure ?? new Error(`the event stream of run ${runId} kept ending without its terminal event`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** failures, 10_000)));
  }
}

/** A refusal that a retry cannot fix (4xx other than 429). */
function isClientError(err: unknown): boolean {
  const status = (err as { status?: unknown })?.status;
  return typeof status === 'number' && status >= 400 && status < 500 && status !== 429;
}
