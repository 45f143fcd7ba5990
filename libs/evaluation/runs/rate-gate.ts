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
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay);
      signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}
