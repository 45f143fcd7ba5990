import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DECORATORS } from '@nestjs/swagger';
import type { Request } from 'express';
import { DomainError } from './domain-error.js';
import { CommonErrors } from './error-codes.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

function matches(mediaType: string, accepted: string): boolean {
  if (accepted === mediaType) return true;
  if (accepted === 'application/json') return /^application\/([a-z0-9.+-]+\+)?json$/.test(mediaType);
  return false;
}

/**
 * 415 for a body whose Content-Type the operation does not consume. The accepted types are
 * the route's `@ApiConsumes` (application/json when it has none), so the OpenAPI document
 * and the check cannot disagree.
 */
@Injectable()
export class MediaTypeGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<Request>();
    if (!BODY_METHODS.has(req.method) || !hasBody(req)) return true;
    const accepted = this.reflector.getAllAndOverride<string[] | undefined>(DECORATORS.API_CONSUMES, [
      context.getHandler(),
      context.getClass(),
    ]) ?? ['application/json'];
    const mediaType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (accepted.some((a) => matches(mediaType, a))) return true;
    throw new DomainError(
      CommonErrors.unsupported_media_type,
      `Content-Type ${mediaType || '(none)'} is not accepted here; send ${accepted.join(' or ')}`,
      { accepted },
    );
  }
}
