import { describe, expect, it } from '@jest/globals';
import { loadEnvironment } from '#libs/config/environment.js';
import {
  callerKey,
  rateLimitClassOf,
  rateLimitHeader,
  rateLimitHeaders,
  rateLimitPolicies,
  rateLimitPolicyHeader,
  type RateLimitPolicy,
} from './rate-limits.js';

const write: RateLimitPolicy = { name: 'write', quota: 300, windowSeconds: 60 };

describe('rate limits', () => {
  it('writes RateLimit-Policy and RateLimit as structured-field lists of one named item (draft-ietf-httpapi-ratelimit-headers)', () => {
    expect(rateLimitPolicyHeader(write)).toBe('"write";q=300;w=60');
    expect(rateLimitHeader({ policy: write, remaining: 287, resetSeconds: 42, exceeded: false })).toBe(
      '"write";r=287;t=42',
    );
  });

  it('adds Retry-After, the seconds to the reset, only over the quota', () => {
    expect(rateLimitHeaders({ policy: write, remaining: 3, resetSeconds: 9, exceeded: false })).toEqual({
      'RateLimit-Policy': '"write";q=300;w=60',
      RateLimit: '"write";r=3;t=9',
    });
    expect(rateLimitHeaders({ policy: write, remaining: 0, resetSeconds: 17, exceeded: true })).toEqual({
      'RateLimit-Policy': '"write";q=300;w=60',
      RateLimit: '"write";r=0;t=17',
      'Retry-After': '17',
    });
  });

  it('classes a request by its route, else by its method', () => {
    expect(['GET', 'HEAD'].map((m) => rateLimitClassOf(m, undefined))).toEqual(['read', 'read']);
    expect(['POST', 'PUT', 'PATCH', 'DELETE'].map((m) => rateLimitClassOf(m, undefined))).toEqual([
      'write',
      'write',
      'write',
      'write',
    ]);
    expect(rateLimitClassOf('POST', 'ingestion')).toBe('ingestion');
    expect(rateLimitClassOf('POST', 'login')).toBe('login');
  });

  it('keys a caller by API key, user or address, each in a space of its own', () => {
    const id = '6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c';
    expect([callerKey({ apiKeyId: id }).key, callerKey({ userId: id }).key, callerKey({ address: '::1' }).key]).toEqual(
      [`key:${id}`, `user:${id}`, 'address:::1'],
    );
  });

  it('takes its production defaults and overrides from the environment', () => {
    expect(rateLimitPolicies(loadEnvironment({}))).toEqual({
      read: { name: 'read', quota: 1200, windowSeconds: 60 },
      write: { name: 'write', quota: 300, windowSeconds: 60 },
      ingestion: { name: 'ingestion', quota: 600, windowSeconds: 60 },
      login: { name: 'login', quota: 30, windowSeconds: 60 },
    });
    const env = loadEnvironment({ RATE_LIMIT_WINDOW_SECONDS: '10', RATE_LIMIT_LOGIN: '5' });
    expect(rateLimitPolicies(env).login).toEqual({ name: 'login', quota: 5, windowSeconds: 10 });
    expect(env.RATE_LIMITS).toBe(true);
    expect(loadEnvironment({ RATE_LIMITS: 'false' }).RATE_LIMITS).toBe(false);
    expect(() => loadEnvironment({ RATE_LIMIT_READ: '0' })).toThrow(/RATE_LIMIT_READ/);
  });
});
