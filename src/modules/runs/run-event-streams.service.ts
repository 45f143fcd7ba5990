import { Injectable, Logger } from '@nestjs/common';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError, ValidationFailedError } from '#libs/common/domain-error.js';
import type { EventSink } from '#libs/common/sse.js';
import { DatabaseNotifications } from '#libs/database/notifications.js';
import { AppConfig } from '#libs/config/app-config.js';
import type { RunEventResponse } from './dto/run.dto.js';
import { TERMINAL_RUN_STATES, type RunState } from './entities/run.entity.js';
import { RunErrors } from './runs.errors.js';
import { RUN_EVENTS_CHANNEL, RunsRepository } from './runs.repository.js';
import { toEventResponse } from './runs.mapper.js';
/** Events read at once. */
const PAGE = 500;
/**
 * Event ids come from one sequence, taken at INSERT and visible at COMMIT, so an event can
 * become visible after one with a higher id (a cancel's transaction still open while the worker
 * writes progress). A stream reads again the ids it sent within this window and sends what it
 * had not seen; transactions that append run events last milliseconds.
 */
const LATE_COMMIT_MS = 10_000;
/** Sent ids remembered per stream at most (a large backlog): the oldest settle first. */
const MAX_REMEMBERED = 5_000;
const RETRY_AFTER_S = '5';

/** Where a stream stands: every event id at or below `floor` was sent or settled; `recent` were sent within LATE_COMMIT_MS. */
class StreamCursor {
  private floor: number;
  private last: number;
  private readonly recent = new Map<number, number>();

  constructor(after: number) {
    this.floor = after;
    this.last = after;
  }

  /** The id to read after: the ids sent within the window are read again. */
  readFrom(now: number): number {
    for (const [seq, at] of this.recent) {
      if (now - at <= LATE_COMMIT_MS && this.recent.size <= MAX_REMEMBERED) break;
      this.recent.delete(seq);
      this.floor = Math.max(this.floor, seq);
    }
    return this.floor;
  }

  isNew(seq: number): boolean {
    return seq > this.floor && !this.recent.has(seq);
  }

  /** Records a sent event; answers the stream's position (its SSE id), the highest id sent. */
  sent(seq: number, now: number): number {
    this.recent.set(seq, now);
    this.last = Math.max(this.last, seq);
    return this.last;
  }
}

/** A wake-up that is not lost when it rings while nobody waits. */
class Doorbell {
  private rung = false;
  private answer?: () => void;

  ring(): void {
    this.rung = true;
    this.answer?.();
  }

  /** Resolves at the next ring (at once if one came since the last wait), after `ms`, or when `closed` aborts. */
  wait(ms: number, closed: AbortSignal): Promise<'ring' | 'idle' | 'closed'> {
    if (closed.aborted) return Promise.resolve('closed');
    if (this.rung) {
      this.rung = false;
      return Promise.resolve('ring');
    }
    return new Promise((resolve) => {
      const settle = (why: 'ring' | 'idle' | 'closed') => {
        clearTimeout(timer);
        closed.removeEventListener('abort', onAbort);
        this.answer = undefined;
        this.rung = false;
        resolve(why);
      };
      const onAbort = () => settle('closed');
      const timer = setTimeout(() => settle('idle'), ms);
      closed.addEventListener('abort', onAbort, { once: true });
      this.answer = () => settle('ring');
    });
  }
}

function isTerminalEvent(e: RunEventResponse): boolean {
  return e.type === 'state_changed' && TERMINAL_RUN_STATES.has(e.data.to as RunState);
}

/**
 * Live run events as Server-Sent Events: the same events as GET /runs/{id}/events, as they are
 * written, by whichever process executes the run. A stream subscribes to the run's signal
 * first, then reads the backlog after its cursor, then reads again at each signal (and each
 * heartbeat, in case one was lost), sending each event once by its id. It ends after the event
 * of the run's terminal state, at once after the backlog when the run had already ended, when
 * the client goes, and when the server drains. Streams per process and per user are bounded.
 */
@Injectable()
export class RunEventStreams {
  private readonly logger = new Logger('RunEventStreams');
  private open = 0;
  private readonly perUser = new Map<string, number>();
  private readonly doorbells = new Map<string, Set<Doorbell>>();
  private listening?: Promise<unknown>;

  constructor(
    private readonly runs: RunsRepository,
    private readonly notifications: DatabaseNotifications,
    private readonly config: AppConfig,
  ) {}

  /** Streams open in this process now. */
  get openStreams(): number {
    return this.open;
  }

  async serve(
    access: WorkspaceAccess,
    runId: string,
    from: { after?: number; lastEventId?: string },
    caller: Principal,
    sink: EventSink,
  ): Promise<void> {
    const after = startingPoint(from);
    const run = await this.runs.find(access.workspaceId, runId);
    if (!run) throw new NotFoundError('run', runId);
    const endedBefore = TERMINAL_RUN_STATES.has(run.state);
    const release = this.acquire(caller.userId);
    try {
      const bell = new Doorbell();
      const unsubscribe = await this.subscribe(runId, bell);
      try {
        sink.start();
        await this.pump(runId, new StreamCursor(after), bell, sink, endedBefore);
      } finally {
        unsubscribe();
      }
    } finally {
      release();
      sink.end();
    }
  }

  private async pump(
    runId: string,
    cursor: StreamCursor,
    bell: Doorbell,
    sink: EventSink,
    endedBefore: boolean,
  ): Promise<void> {
    const heartbeatMs = this.config.env.RUN_EVENT_STREAM_HEARTBEAT_SECONDS * 1000;
    try {
      for (;;) {
        if ((await this.deliver(runId, cursor, sink)) || endedBefore) return;
        const why = await bell.wait(heartbeatMs, sink.closed);
        if (why === 'closed') return;
        if (why === 'idle') sink.heartbeat();
      }
    } catch (err) {
      // The headers are sent: the stream ends and the client resumes from its Last-Event-ID.
      this.logger.warn(`the event stream of run ${runId} ended early: ${(err as Error).message}`);
    }
  }

  /** Sends the events not sent yet; answers whether the stream is over (the terminal event sent, or the client gone). */
  private async deliver(runId: string, cursor: StreamCursor, sink: EventSink): Promise<boolean> {
    let page = cursor.readFrom(Date.now());
    for (;;) {
      const rows = await this.runs.events(runId, page, PAGE);
      for (const row of rows) {
        const event = toEventResponse(row);
        page = event.seq;
        if (!cursor.isNew(event.seq)) continue;
        await sink.send(String(cursor.sent(event.seq, Date.now())), event.type, event);
        if (isTerminalEvent(event) || sink.closed.aborted) return true;
      }
      if (rows.length < PAGE) return sink.closed.aborted;
    }
  }

  private acquire(userId: string): () => void {
    if (this.open >= this.config.env.RUN_EVENT_STREAMS_MAX) {
      throw new DomainError(
        RunErrors.event_streams_exhausted,
        `This API process serves ${this.config.env.RUN_EVENT_STREAMS_MAX} live event streams already (RUN_EVENT_STREAMS_MAX); retry later or poll GET /runs/{run_id}/events`,
        { limit: this.config.env.RUN_EVENT_STREAMS_MAX },
        { 'Retry-After': RETRY_AFTER_S },
      );
    }
    const mine = this.perUser.get(userId) ?? 0;
    if (mine >= this.config.env.RUN_EVENT_STREAMS_PER_USER) {
      throw new DomainError(
        RunErrors.too_many_event_streams,
        `You hold ${mine} live event streams on this API process already (RUN_EVENT_STREAMS_PER_USER); close one first`,
        { limit: this.config.env.RUN_EVENT_STREAMS_PER_USER },
        { 'Retry-After': RETRY_AFTER_S },
      );
    }
    this.open++;
    this.perUser.set(userId, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
      const left = (this.perUser.get(userId) ?? 1) - 1;
      if (left) this.perUser.set(userId, left);
      else this.perUser.delete(userId);
    };
  }

  /** Rings `bell` at each signal of the run (from any process); resolves once the process listens. */
  private async subscribe(runId: string, bell: Doorbell): Promise<() => void> {
    let bells = this.doorbells.get(runId);
    if (!bells) this.doorbells.set(runId, (bells = new Set()));
    bells.add(bell);
    const unsubscribe = () => {
      bells.delete(bell);
      if (!bells.size && this.doorbells.get(runId) === bells) this.doorbells.delete(runId);
    };
    try {
      this.listening ??= this.notifications
        .listen(RUN_EVENTS_CHANNEL, (payload) => this.signalled(payload))
        .catch((err: unknown) => {
          this.listening = undefined;
          throw err;
        });
      await this.listening;
    } catch (err) {
      unsubscribe();
      throw err;
    }
    return unsubscribe;
  }

  /** A run's events changed (or, without a run id, signals may have been missed: every stream reads again). */
  private signalled(runId: string | undefined): void {
    const bells =
      runId === undefined
        ? [...this.doorbells.values()].flatMap((set) => [...set])
        : [...(this.doorbells.get(runId) ?? [])];
    for (const bell of bells) bell.ring();
  }
}

/** The cursor to start after: the Last-Event-ID header (an EventSource reconnecting) wins over `after`. */
function startingPoint(from: { after?: number; lastEventId?: string }): number {
  const text = from.lastEventId?.trim() ?? '';
  if (!text) return from.after ?? 0;
  const value = Number(text);
  if (!/^\d{1,16}$/.test(text) || !Number.isSafeInteger(value)) {
    const message = 'Last-Event-ID must be the `id` of an event of this stream (an integer from 0)';
    throw new ValidationFailedError(message, [{ field: 'Last-Event-ID', message }]);
  }
  return value;
}
