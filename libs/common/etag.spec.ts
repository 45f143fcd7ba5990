import { describe, expect, it } from '@jest/globals';
import { DomainError } from './domain-error.js';
import { IfMatchPrecondition, IfNoneMatchCondition, strongEtag } from './etag.js';

describe('ETags', () => {
  it('are strong, quoted and change with the version', () => {
    const a = strongEtag('id', 1);
    expect(a).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(strongEtag('id', 2)).not.toBe(a);
    expect(strongEtag('id', 1)).toBe(a);
  });

  it('If-None-Match matches the current tag, a list, a weak form or *', () => {
    const tag = strongEtag('x', 3);
    const matches = (header: string | undefined) => IfNoneMatchCondition.of(header).matches(tag);
    expect(matches(tag)).toBe(true);
    expect(matches(`"other", ${tag}`)).toBe(true);
    expect(matches(`W/${tag}`)).toBe(true);
    expect(matches('*')).toBe(true);
    expect(matches('"stale"')).toBe(false);
    expect(matches(undefined)).toBe(false);
  });

  it('If-Match refuses a stale tag with 412 and lets a write without one through unless required', () => {
    const tag = strongEtag('x', 3);
    const check =
      (header: string | undefined, required = false) =>
      () =>
        IfMatchPrecondition.of(header).check(tag, required);
    expect(check(tag)).not.toThrow();
    expect(check(`"a", ${tag}`)).not.toThrow();
    expect(check('*')).not.toThrow();
    expect(check(undefined)).not.toThrow();
    expect(check('"stale"')).toThrow(DomainError);
    expect(check('"stale"')).toThrow(expect.objectContaining({ code: 'precondition_failed' }));
    expect(check(undefined, true)).toThrow(expect.objectContaining({ code: 'precondition_required' }));
    expect(check('', true)).toThrow(expect.objectContaining({ code: 'precondition_required' }));
  });
});
