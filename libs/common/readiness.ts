import { Global, Injectable, Module } from '@nestjs/common';

/** Throws (or rejects) when the dependency does not answer. */
export type ReadinessProbe = () => Promise<void>;

/**
 * What GET /ready checks. The database module registers `database`, the queue module
 * `queue`; a family with its own hard dependency registers it the same way.
 */
@Injectable()
export class ReadinessRegistry {
  private readonly probes = new Map<string, ReadinessProbe>();
  private stopping = false;

  /** From the shutdown signal on, the process is not ready, whatever its dependencies say. */
  beginShutdown(): void {
    this.stopping = true;
  }

  get shuttingDown(): boolean {
    return this.stopping;
  }

  register(name: string, probe: ReadinessProbe): void {
    this.probes.set(name, probe);
  }

  entries(): Array<[string, ReadinessProbe]> {
    return [...this.probes.entries()];
  }
}

@Global()
@Module({ providers: [ReadinessRegistry], exports: [ReadinessRegistry] })
export class ReadinessModule {}
