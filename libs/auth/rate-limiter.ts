import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { once } from 'node:events';
import type { Redis } from 'ioredis';
import type * as Flexible from 'rate-limiter-flexible';
import { DomainError } from '#libs/common/domain-error.js';
import { CommonErrors } from '#libs/common/error-codes.js';
import { AppConfig } from '#libs/config/app-config.js';
import { lazyRequire } from '#libs/common/lazy-require.js';
import { ThrottledLog } from '#libs/queue/drivers/driver-support.js';
import {
  callerKey,
  RATE_LIMIT_CLASSES,
  rateLimitHeaders,
  rateLimitPolicies,
  type RateLimitCaller,
  type RateLimitClass,
  type RateLimitPolicy,
  type RateLimitState,
} from './rate-limits.js';

/** How long a boot waits for Redis before it counts in process meanwhile. */
const READY_WAIT_MS = 2000;

type Limiters = Record<RateLimitClass, Flexible.RateLimiterAbstract>;

// The package's index loads its thirty-odd stores (some 50 ms at start); these are the two used.
const RateLimiterMemory = lazyRequire<typeof Flexible.RateLimiterMemory>(
  'rate-limiter-flexible/lib/RateLimiterMemory.js',
);
const RateLimiterRedis = lazyRequire<typeof Flexible.RateLimiterRedis>('rate-limiter-flexible/lib/RateLimiterRedis.js');
const RateLimiterRes = lazyRequire<typeof Flexible.RateLimiterRes>('rate-limiter-flexible/lib/RateLimiterRes.js');

/**
 * Counts each caller's requests per class (rate-limiter-flexible, fixed windows). With REDIS_URL
 * the counters live in Redis, so every API process of a deployment shares one budget per caller;
 * without it, in this process's memory (the embedded mode is one process). While Redis does not
 * answer, an in-process limiter of the same policy stands in (the insurance limiter), so a Redis
 * outage neither stops the API nor lifts the limits.
 */
@Injectable()
export class RateLimiter implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimits');
  private readonly redisErrors = new ThrottledLog(this.logger);
  readonly policies: Record<RateLimitClass, RateLimitPolicy>;
  private limiters?: Promise<Limiters>;
  private redis?: Redis;

  constructor(
    private readonly config: AppConfig,
    private readonly adapter: HttpAdapterHost,
  ) {
    this.policies = rateLimitPolicies(config.env);
  }

  get enabled(): boolean {
    return this.config.env.RATE_LIMITS;
  }

  /**
   * Counts one request of `kind` against `caller` and answers the headers to send with it
   * (none while RATE_LIMITS is off); over the quota, throws 429 `rate_limit_exceeded` carrying them
   * and Retry-After.
   */
  async admit(kind: RateLimitClass, caller: RateLimitCaller): Promise<Record<string, string>> {
    if (!this.enabled) return {};
    const state = await this.consume(kind, caller);
    const headers = rateLimitHeaders(state);
    if (!state.exceeded) return headers;
    const { quota, windowSeconds } = state.policy;
    throw new DomainError(
      CommonErrors.rate_limit_exceeded,
      `Too many ${kind} requests: ${callerKey(caller).who} may send ${quota} in ${windowSeconds} s; retry in ${state.resetSeconds} s`,
      { policy: kind, quota, window_seconds: windowSeconds, retry_after_seconds: state.resetSeconds },
      headers,
    );
  }

  /** Counts one request of `kind` against `caller`: what remains, and whether it was over. */
  private async consume(kind: RateLimitClass, caller: RateLimitCaller): Promise<RateLimitState> {
    const limiter = (await (this.limiters ??= this.build()))[kind];
    const policy = this.policies[kind];
    try {
      return stateOf(policy, await limiter.consume(callerKey(caller).key, 1), false);
    } catch (err) {
      if (err instanceof RateLimiterRes()) return stateOf(policy, err, true);
      throw err;
    }
  }

  /**
   * An HTTP process connects at boot, so its first requests already count in Redis rather than in
   * the stand-in; a worker process (no HTTP server) serves none and connects nothing.
   */
  async onModuleInit(): Promise<void> {
    if (this.enabled && this.adapter.httpAdapter) await (this.limiters ??= this.build());
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis?.disconnect();
  }

  private async build(): Promise<Limiters> {
    const limiters = {} as Limiters;
    const url = this.config.env.REDIS_URL;
    if (!url) {
      for (const kind of RATE_LIMIT_CLASSES) limiters[kind] = new (RateLimiterMemory())(this.options(kind));
      return limiters;
    }
    // ioredis loads only when REDIS_URL asks for it (as the queue's driver does).
    const { Redis } = await import('ioredis');
    // Fails fast while Redis is away (no offline queue, a short command timeout): the insurance limiter answers.
    this.redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 1000,
      disconnectTimeout: 500,
      connectionName: 'ews-rate-limits',
    });
    this.redis.on('error', (err: Error) => this.redisErrors.warn(`Redis (rate limits): ${err.message}`));
    // A Redis that does not answer within READY_WAIT_MS does not hold the boot: the stand-in counts meanwhile.
    const ready = once(this.redis, 'ready').then(
      () => true,
      () => false,
    );
    const waited = new Promise<false>((resolve) => setTimeout(resolve, READY_WAIT_MS, false).unref());
    if (!(await Promise.race([ready, waited])))
      this.redisErrors.warn('Redis (rate limits) is not ready; counting in process');
    for (const kind of RATE_LIMIT_CLASSES) {
      limiters[kind] = new (RateLimiterRedis())({
        ...this.options(kind),
        storeClient: this.redis,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new (RateLimiterMemory())(this.options(kind)),
      });
    }
    return limiters;
  }

  private options(kind: RateLimitClass): { points: number; duration: number; keyPrefix: string } {
    const policy = this.policies[kind];
    // QUEUE_PREFIX names the deployment in Redis: processes sharing it share the budgets.
    return {
      points: policy.quota,
      duration: policy.windowSeconds,
      keyPrefix: `${this.config.env.QUEUE_PREFIX}:rate:${kind}`,
    };
  }
}

function stateOf(policy: RateLimitPolicy, res: Flexible.RateLimiterRes, exceeded: boolean): RateLimitState {
  return {
    policy,
    remaining: Math.max(0, res.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
    exceeded,
  };
}
