import { Injectable, Logger } from '@nestjs/common';
import { DomainError } from '#libs/common/domain-error.js';
import { CommonErrors } from '#libs/common/error-codes.js';
import { ReadinessRegistry } from '#libs/common/readiness.js';
import { withTimeout } from '#libs/common/timeout.js';
import { SERVICE_VERSION } from '../../version.js';
import type { LiveResponse, ReadinessCheck, ReadyResponse } from './dto/status.dto.js';

/** A probe that has not answered within this bound counts as down (GET /ready must answer fast for orchestrators). */
export const READINESS_PROBE_TIMEOUT_MS = 3_000;

/** Probe errors reach an unauthenticated caller: keep them short and free of connection strings. */
function publicReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>').slice(0, 200) || 'the probe failed';
}

@Injectable()
export class StatusService {
  private readonly logger = new Logger('Readiness');

  constructor(private readonly readiness: ReadinessRegistry) {}

  live(): LiveResponse {
    return { status: 'ok', uptime_seconds: Math.round(process.uptime()), version: SERVICE_VERSION };
  }

  /** Runs every registered probe at once; any probe down (or slower than the bound), or a shutdown under way, makes the answer 503. */
  async ready(): Promise<ReadyResponse> {
    if (this.readiness.shuttingDown) {
      const checks = { shutdown: { status: 'down' as const, latency_ms: 0, error: 'the service is shutting down' } };
      throw new DomainError(
        CommonErrors.service_unavailable,
        'Not ready: the service is shutting down',
        { checks },
        { 'Retry-After': '5', 'Cache-Control': 'no-store' },
      );
    }
    const results = await Promise.all(
      this.readiness.entries().map(async ([name, probe]): Promise<[string, ReadinessCheck]> => {
        const started = performance.now();
        try {
          await withTimeout(
            Promise.resolve().then(probe),
            READINESS_PROBE_TIMEOUT_MS,
            `${name} did not answer within ${READINESS_PROBE_TIMEOUT_MS} ms`,
          );
          return [name, { status: 'up', latency_ms: Math.round(performance.now() - started) }];
        } catch (err) {
          this.logger.warn(`readiness probe ${name} failed: ${err instanceof Error ? err.message : String(err)}`);
          return [
            name,
            { status: 'down', latency_ms: Math.round(performance.now() - started), error: publicReason(err) },
          ];
        }
      }),
    );
    const checks = Object.fromEntries(results.sort(([a], [b]) => a.localeCompare(b)));
    const down = results.filter(([, check]) => check.status === 'down');
    if (down.length > 0) {
      const detail = `Not ready: ${down.map(([name, check]) => `${name} is down (${check.error})`).join('; ')}`;
      throw new DomainError(
        CommonErrors.service_unavailable,
        detail,
        { checks },
        { 'Retry-After': '5', 'Cache-Control': 'no-store' },
      );
    }
    return { status: 'ready', checks };
  }
}
