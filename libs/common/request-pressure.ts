import { setTimeout as sleep } from 'node:timers/promises';

/** How late the event loop may run (a timer firing after its time) before background work waits while requests are served. */
export const YIELD_DELAY_MS = 1;
/** How long a waiting turn sleeps between looks, and how long a look stays fresh for the other turns. */
const SAMPLE_MS = 50;
/** The longest one turn waits: a steady load slows background work down but never stops it. */
export const MAX_WAIT_MS = 250;

/** The time and the sleeping the measure uses: the process's own, or a test's. */
export interface PressureClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const processClock: PressureClock = {
  now: () => performance.now(),
  sleep: (ms, signal) => sleep(ms, undefined, { signal }).catch(() => undefined),
};

/**
 * Requests first, in a process that serves them and runs jobs too (the in-process workers that
 * `npm start` gives): background work asks `giveWay()` before each unit of work (a run before each
 * SUT call). While requests are being served (see `serving`) and the event loop runs late, the
 * turn waits, up to MAX_WAIT_MS. How late the loop runs is measured by the waiting itself: a turn
 * sleeps SAMPLE_MS and sees how much later than asked its timer fired (more than YIELD_DELAY_MS:
 * the loop is busy with something, the requests' work among it); the look stays fresh for
 * SAMPLE_MS, so other turns meanwhile go at once or wait without looking again. The threshold and
 * the counting of arrivals were chosen by measurement: a GET's p99 under a run stays within the
 * aim on both databases (docs/performance.md#a-get-while-a-run-is-going). A worker
 * process (`npm run start:worker`) serves no request, so its work never waits here; there the
 * operating system's priority does the same (WORKER_NICE). See docs/architecture.md#requests-first.
 */
export class RequestPressure {
  private inFlight = 0;
  /** When the last two requests began. */
  private lastBegun = -Infinity;
  private beforeLastBegun = -Infinity;
  private readonly counted = new WeakSet<object>();
  private lateMs = 0;
  private lookedAt = -Infinity;

  constructor(private readonly clock: PressureClock = processClock) {}

  /** A request arrived (the HTTP pipeline calls it with the response). */
  begin(res: object): void {
    this.counted.add(res);
    this.inFlight++;
    this.beforeLastBegun = this.lastBegun;
    this.lastBegun = this.clock.now();
  }

  /**
   * Its response is done, or it became a stream that stays open (an event stream is not a request
   * waiting to be served). Once per response; later calls do nothing.
   */
  end(res: object): void {
    if (this.counted.delete(res)) this.inFlight--;
  }

  get requestsInFlight(): number {
    return this.inFlight;
  }

  /**
   * Requests are being served: some are in flight, or two arrived within the last SAMPLE_MS. On
   * the embedded database a request often runs from its first byte to its answer within one turn of
   * the event loop (PGlite answers on node's own thread), so between turns none is in flight while
   * the next ones wait in their sockets: their arrivals are what shows. Two, so that a client
   * polling a run's progress a few times a second does not hold the run back.
   */
  private serving(): boolean {
    return this.inFlight > 0 || this.clock.now() - this.beforeLastBegun < SAMPLE_MS;
  }

  /** How late the event loop ran at the last look, in ms (0 until a turn looked). */
  get recentDelayMs(): number {
    return this.lateMs;
  }

  /** Resolves when background work may go on: at once unless requests are being served and the loop runs late. */
  async giveWay(signal?: AbortSignal): Promise<void> {
    const { clock } = this;
    const deadline = clock.now() + MAX_WAIT_MS;
    while (this.serving() && !signal?.aborted) {
      const now = clock.now();
      const fresh = now - this.lookedAt < SAMPLE_MS;
      if (fresh && this.lateMs <= YIELD_DELAY_MS) return;
      const pause = Math.min(SAMPLE_MS, deadline - now);
      if (pause <= 0) return;
      await clock.sleep(pause, signal);
      // Woken by the abort, not by the timer: nothing was measured.
      if (signal?.aborted) return;
      if (!fresh || clock.now() - this.lookedAt >= SAMPLE_MS) {
        this.lateMs = Math.max(0, clock.now() - now - pause);
        this.lookedAt = clock.now();
      }
    }
  }
}

/** The process's one measure: the HTTP pipeline counts requests into it, background work asks it. */
export const requestPressure = new RequestPressure();
