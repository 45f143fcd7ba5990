import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { RateLimiter } from './rate-limiter.js';
import { RATE_LIMIT_CLASS, rateLimitClassOf, type RateLimitCaller, type RateLimitClass } from './rate-limits.js';
import type { Principal } from './roles.js';

/**
 * Counts every request against its caller's quota for the route's class, once the access guard
 * has said who the caller is (it runs right after it): an API key, a user, or, for routes without
 * a token and for every login, the client's address (`req.ip`, which believes X-Forwarded-For
 * only from TRUSTED_PROXIES). Each counted answer carries `RateLimit-Policy` and `RateLimit`
 * (draft-ietf-httpapi-ratelimit-headers); over the quota, 429 `rate_limit_exceeded` with
 * `Retry-After`, in the route's own error form (an OTLP export's is its protocol's).
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http' || !this.limiter.enabled) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<Request & { principal?: Principal }>();
    const declared = this.reflector.getAllAndOverride<RateLimitClass | undefined>(RATE_LIMIT_CLASS, [
      context.getHandler(),
      context.getClass(),
    ]);
    const kind = rateLimitClassOf(req.method, declared);
    const headers = await this.limiter.admit(kind, callerOf(kind, req));
    const res = http.getResponse<Response>();
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    return true;
  }
}

/** Who the request counts against: logins always by address, else the key or user the access guard found. */
function callerOf(kind: RateLimitClass, req: Request & { principal?: Principal }): RateLimitCaller {
  const principal = kind === 'login' ? undefined : req.principal;
  if (principal?.apiKey) return { apiKeyId: principal.apiKey.id };
  if (principal) return { userId: principal.userId };
  return { address: req.ip ?? req.socket.remoteAddress ?? 'unknown' };
}
