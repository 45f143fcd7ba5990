import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { Environment } from '#libs/config/environment.js';

/**
 * What a request is counted as. Reads and writes by method; `ingestion` (trace landings, OTLP
 * exports, feedback, dataset and run uploads) and `login` (the unauthenticated routes that take
 * a credential) where the route says so with `@RateLimitClass`.
 */
export type RateLimitClass = 'read' | 'write' | 'ingestion' | 'login';

export const RATE_LIMIT_CLASSES: readonly RateLimitClass[] = ['read', 'write', 'ingestion', 'login'];

export const RATE_LIMIT_CLASS = 'ews:rate-limit-class';

/** Counts the route's requests as `ingestion` or `login` instead of by method; shown as `x-rate-limit` in the document. */
export const RateLimitClass = (kind: 'ingestion' | 'login') =>
  applyDecorators(SetMetadata(RATE_LIMIT_CLASS, kind), ApiExtension('x-rate-limit', kind));

/** The class of a request: the route's own, else by method. */
export function rateLimitClassOf(method: string, declared: RateLimitClass | undefined): RateLimitClass {
  if (declared) return declared;
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

/** One class's quota: `quota` requests per `windowSeconds`, for each caller. */
export interface RateLimitPolicy {
  name: RateLimitClass;
  quota: number;
  windowSeconds: number;
}

/** The four policies the environment sets (RATE_LIMIT_*). */
export function rateLimitPolicies(env: Environment): Record<RateLimitClass, RateLimitPolicy> {
  const policy = (name: RateLimitClass, quota: number): RateLimitPolicy => ({
    name,
    quota,
    windowSeconds: env.RATE_LIMIT_WINDOW_SECONDS,
  });
  return {
    read: policy('read', env.RATE_LIMIT_READ),
    write: policy('write', env.RATE_LIMIT_WRITE),
    ingestion: policy('ingestion', env.RATE_LIMIT_INGESTION),
    login: policy('login', env.RATE_LIMIT_LOGIN),
  };
}

/** Who a request is counted against: an API key, a user, or (no one signed in) the client's address. */
export type RateLimitCaller = { apiKeyId: string } | { userId: string } | { address: string };

/** The caller's key in the limiter's store; also how a problem names the caller. */
export function callerKey(caller: RateLimitCaller): { key: string; who: string } {
  if ('apiKeyId' in caller) return { key: `key:${caller.apiKeyId}`, who: 'this API key' };
  if ('userId' in caller) return { key: `user:${caller.userId}`, who: 'this user' };
  return { key: `address:${caller.address}`, who: 'this address' };
}

/** What the limiter counted for one request. */
export interface RateLimitState {
  policy: RateLimitPolicy;
  /** Requests left in the window (0 once over). */
  remaining: number;
  /** Seconds until the window resets (at least 1 while it runs). */
  resetSeconds: number;
  /** Whether this request was over the quota. */
  exceeded: boolean;
}

/**
 * `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers): a structured-field list of one
 * item, the policy's name as a string with its quota `q` and window `w` in seconds.
 */
export function rateLimitPolicyHeader(policy: RateLimitPolicy): string {
  return `${sfString(policy.name)};q=${policy.quota};w=${policy.windowSeconds}`;
}

/** `RateLimit` (same draft): the policy's name with what remains `r` and the seconds to its reset `t`. */
export function rateLimitHeader(state: RateLimitState): string {
  return `${sfString(state.policy.name)};r=${state.remaining};t=${state.resetSeconds}`;
}

/** The response headers of a counted request; over the quota, `Retry-After` too. */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'RateLimit-Policy': rateLimitPolicyHeader(state.policy),
    RateLimit: rateLimitHeader(state),
    ...(state.exceeded ? { 'Retry-After': String(state.resetSeconds) } : {}),
  };
}

/** An sf-string (RFC 8941 §3.3.3): printable ASCII in quotes, `"` and `\` escaped. */
function sfString(value: string): string {
  if (!/^[\x20-\x7e]*$/.test(value)) throw new Error(`not an sf-string: ${JSON.stringify(value)}`);
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
