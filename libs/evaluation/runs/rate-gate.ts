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
    // The abort listener goes when the slot comes: a run's signal outlives its calls, and one left per call would
    // keep a closure per item of a rate-limited run until the run ends.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, delay);
      signal?.addEventListener('abort', done, { once: true });
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
    });
  }
}
