import { describe, expect, it } from '@jest/globals';
import type { HttpAdapterHost } from '@nestjs/core';
import { DomainError } from '#libs/common/domain-error.js';
import { AppConfig, type KeyMaterial } from '#libs/config/app-config.js';
import { loadEnvironment } from '#libs/config/environment.js';
import { RateLimiter } from './rate-limiter.js';

/** A limiter as an HTTP process builds it (an HTTP adapter present), from these variables. */
async function limiter(env: Record<string, string>): Promise<RateLimiter> {
  const config = new AppConfig(loadEnvironment({ RATE_LIMIT_READ: '2', ...env }), {} as KeyMaterial);
  const built = new RateLimiter(config, { httpAdapter: {} } as HttpAdapterHost);
  await built.onModuleInit();
  return built;
}

async function refusal(promise: Promise<unknown>): Promise<DomainError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(err)}`);
  return err;
}

describe('RateLimiter', () => {
  it('counts in process without REDIS_URL, each caller apart, and refuses past the quota with the headers and Retry-After', async () => {
    const limits = await limiter({});
    const caller = { apiKeyId: 'a3f1' };
    expect(await limits.admit('read', caller)).toEqual({
      'RateLimit-Policy': '"read";q=2;w=60',
      RateLimit: '"read";r=1;t=60',
    });
    // The window started with the first request: its reset counts down from 60 s (a slow machine may have moved on a second).
    expect((await limits.admit('read', caller)).RateLimit).toMatch(/^"read";r=0;t=(59|60)$/);
    const err = await refusal(limits.admit('read', caller));
    expect(err.code).toBe('rate_limit_exceeded');
    const reset = Number(err.headers['Retry-After']);
    expect(reset).toBeGreaterThanOrEqual(59);
    expect(err.headers).toEqual({
      'RateLimit-Policy': '"read";q=2;w=60',
      RateLimit: `"read";r=0;t=${reset}`,
      'Retry-After': String(reset),
    });
    expect(err.extensions).toEqual({ policy: 'read', quota: 2, window_seconds: 60, retry_after_seconds: reset });
    expect((await limits.admit('read', { userId: 'a3f1' })).RateLimit).toBe('"read";r=1;t=60');
    expect((await limits.admit('write', caller)).RateLimit).toBe('"write";r=299;t=60');
  });

  it('keeps limiting in process while Redis does not answer, and does not hold the boot for it', async () => {
    const started = Date.now();
    const limits = await limiter({ REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      expect(Date.now() - started).toBeLessThan(5_000);
      const caller = { address: '203.0.113.9' };
      await limits.admit('read', caller);
      await limits.admit('read', caller);
      expect((await refusal(limits.admit('read', caller))).code).toBe('rate_limit_exceeded');
    } finally {
      await limits.onApplicationShutdown();
    }
  });

  it('answers no headers and refuses nothing with RATE_LIMITS=false', async () => {
    const limits = await limiter({ RATE_LIMITS: 'false' });
    for (let i = 0; i < 5; i++) expect(await limits.admit('read', { apiKeyId: 'a3f1' })).toEqual({});
  });
});
