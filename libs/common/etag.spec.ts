import { describe, expect, it } from '@jest/globals';
import type { Request } from 'express';
import { DomainError } from './domain-error.js';
import { assertIfMatch, ifNoneMatch, strongEtag } from './etag.js';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as Request;

describe('ETags', () => {
  it('are strong, quoted and change with the version', () => {
    const a = strongEtag('id', 1);
    expect(a).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(strongEtag('id', 2)).not.toBe(a);
    expect(strongEtag('id', 1)).toBe(a);
  });

  it('If-None-Match matches the current tag, a list, a weak form or *', () => {
    const tag = strongEtag('x', 3);
    expect(ifNoneMatch(req({ 'if-none-match': tag }), tag)).toBe(true);
    expect(ifNoneMatch(req({ 'if-none-match': `"other", ${tag}` }), tag)).toBe(true);
    expect(ifNoneMatch(req({ 'if-none-match': `W/${tag}` }), tag)).toBe(true);
    expect(ifNoneMatch(req({ 'if-none-match': '*' }), tag)).toBe(true);
    expect(ifNoneMatch(req({ 'if-none-match': '"stale"' }), tag)).toBe(false);
    expect(ifNoneMatch(req({}), tag)).toBe(false);
  });

  it('If-Match refuses a stale tag with 412 and lets a write without one through unless required', () => {
    const tag = strongEtag('x', 3);
    expect(() => assertIfMatch(req({ 'if-match': tag }), tag)).not.toThrow();
    expect(() => assertIfMatch(req({}), tag)).not.toThrow();
    expect(() => assertIfMatch(req({ 'if-match': '"stale"' }), tag)).toThrow(DomainError);
    try {
      assertIfMatch(req({ 'if-match': '"stale"' }), tag);
    } catch (err) {
      expect((err as DomainError).code).toBe('precondition_failed');
    }
    expect(() => assertIfMatch(req({}), tag, true)).toThrow(expect.objectContaining({ code: 'precondition_required' }));
  });
});
