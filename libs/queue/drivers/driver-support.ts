import type { Logger } from '@nestjs/common';

/** Logs a recurring failure (an unreachable database or Redis) once, then at most every `everyMs`. */
export class ThrottledLog {
  private last = 0;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly everyMs = 30_000,
  ) {}

  warn(message: string): void {
    const now = Date.now();
    if (now - this.last < this.everyMs) {
      this.suppressed += 1;
      return;
    }
    const more = this.suppressed ? ` (${this.suppressed} similar message(s) suppressed)` : '';
    this.last = now;
    this.suppressed = 0;
    this.logger.warn(`${message}${more}`);
  }
}

/** How often a worker process sweeps for expired leases: a third of the lease, 1 to 15 s. */
export function sweepIntervalMs(leaseSeconds: number): number {
  return Math.min(15_000, Math.max(1000, Math.round((leaseSeconds * 1000) / 3)));
}
