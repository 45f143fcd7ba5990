import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { DomainError } from './domain-error.js';
import { CommonErrors } from './error-codes.js';

/** A strong ETag over a record's identity and version counter (or over a representation). */
export function strongEtag(...parts: Array<string | number>): string {
  return `"${createHash('sha256').update(parts.join(':')).digest('base64url').slice(0, 27)}"`;
}

function listOf(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/** True when If-None-Match names the current ETag (or `*`). Weak comparison, per RFC 9110. */
export function ifNoneMatch(req: Request, current: string): boolean {
  const tags = listOf(req.headers['if-none-match']);
  return tags.includes('*') || tags.some((t) => t.replace(/^W\//, '') === current);
}

/**
 * Optimistic concurrency: when the caller sends If-Match it must name the current ETag,
 * else 412. Without If-Match the write goes ahead (last writer wins) unless `required`.
 */
export function assertIfMatch(req: Request, current: string, required = false): void {
  const header = req.headers['if-match'];
  if (!header) {
    if (required) throw new DomainError(CommonErrors.precondition_required, 'Send If-Match with the ETag you read');
    return;
  }
  const tags = listOf(header);
  if (!tags.includes('*') && !tags.includes(current)) {
    throw new DomainError(
      CommonErrors.precondition_failed,
      'The record changed since you read it; read it again and retry',
      { current_etag: current },
    );
  }
}
