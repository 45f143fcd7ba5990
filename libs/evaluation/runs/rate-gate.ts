import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Spaces call starts to at most `perSecond` (null = no limit): each `wait()` resolves at the
 * next free slot, in call order. Combined with a concurrency limit it gives a connection's
 * max_concurrency and requests_per_second.
 */
export class RateGate {
  private next = 0;

  constructor(private readonly perSecond: number | null) {}

  async wait(signal?: AbortSignal): Promise<void> {
    if (!this.perSecond) return;
    const now = performance.now();
    const slot = Math.max(now, this.next);
    this.next = slot + 1000 / this.perSecond;
    const delay = slot - now;
    if (delay <= 0) return;
    // Node's timer removes its abort listener when the slot comes (a run's signal outlives its calls: one left per
    // call would keep a closure per item of a rate-limited run until the run ended); an abort ends the wait early.
    await sleep(delay, undefined, { signal }).catch(() => undefined);
  }
}
