import { createHash } from 'node:crypto';
import { DomainError } from './domain-error.js';
import { CommonErrors } from './error-codes.js';

/** A strong ETag over a record's identity and version counter (or over a representation). */
export function strongEtag(...parts: Array<string | number>): string {
  return `"${createHash('sha256').update(parts.join(':')).digest('base64url').slice(0, 27)}"`;
}

/** The entity tags of an If-Match or If-None-Match header value. */
export function entityTags(header: string | readonly string[] | undefined): string[] {
  return (Array.isArray(header) ? header.join(',') : ((header as string | undefined) ?? ''))
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/**
 * The If-Match a write was sent with, as a value: the controller takes it with `@IfMatch()`
 * (libs/common/etag.decorators.ts) and the service checks it against the record's current ETag.
 */
export class IfMatchPrecondition {
  /** No If-Match sent. */
  static readonly NONE = new IfMatchPrecondition([]);

  constructor(readonly tags: readonly string[]) {}

  static of(header: string | readonly string[] | undefined): IfMatchPrecondition {
    const tags = entityTags(header);
    return tags.length ? new IfMatchPrecondition(tags) : IfMatchPrecondition.NONE;
  }

  /**
   * Optimistic concurrency: when the caller sent If-Match it must name the current ETag (or `*`),
   * else 412. Without If-Match the write goes ahead (last writer wins) unless `required` (428).
   */
  check(current: string, required = false): void {
    if (!this.tags.length) {
      if (required) throw new DomainError(CommonErrors.precondition_required, 'Send If-Match with the ETag you read');
      return;
    }
    if (!this.tags.includes('*') && !this.tags.includes(current)) {
      throw new DomainError(
        CommonErrors.precondition_failed,
        'The record changed since you read it; read it again and retry',
        { current_etag: current },
      );
    }
  }
}

/** The If-None-Match a read was sent with, as a value (`@IfNoneMatch()`). */
export class IfNoneMatchCondition {
  constructor(readonly tags: readonly string[]) {}

  static of(header: string | readonly string[] | undefined): IfNoneMatchCondition {
    return new IfNoneMatchCondition(entityTags(header));
  }

  /** True when it names the current ETag (or `*`): weak comparison, per RFC 9110. */
  matches(current: string): boolean {
    return this.tags.includes('*') || this.tags.some((t) => t.replace(/^W\//, '') === current);
  }
}
