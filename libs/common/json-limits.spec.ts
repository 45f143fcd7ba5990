import { describe, expect, it } from '@jest/globals';
import { hasLoneSurrogate, loneSurrogatePath, reservedMemberPath, scanJson, valueDepth } from './json-limits.js';

describe('scanJson', () => {
  it('counts the nesting of arrays and objects, ignoring brackets inside strings and escaped quotes', () => {
    expect(scanJson('{"a": [1, {"b": []}]}', 64)).toEqual({ depth: 4, tooDeep: false, loneSurrogate: false });
    expect(scanJson('{"a": "[[[[{{{{", "b\\"[[[": "\\\\"}', 2)).toEqual({
      depth: 1,
      tooDeep: false,
      loneSurrogate: false,
    });
    expect(scanJson('[[],[],[[]]]', 64).depth).toBe(3);
    expect(scanJson('"just a string"', 64).depth).toBe(0);
  });

  it('stops at the first level past the limit, on bytes or text, however deep the rest goes', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(scanJson(deep, 64)).toEqual({ depth: 65, tooDeep: true, loneSurrogate: false });
    expect(scanJson(Buffer.from('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)), 64)).toEqual({
      depth: 65,
      tooDeep: true,
      loneSurrogate: false,
    });
    expect(scanJson('['.repeat(64) + ']'.repeat(64), 64).tooDeep).toBe(false);
    expect(scanJson('['.repeat(65) + ']'.repeat(65), 64).tooDeep).toBe(true);
  });

  it('finds \\u escapes that leave a surrogate unpaired, and only those', () => {
    expect(scanJson('{"a": "\\ud83d\\ude00"}', 64).loneSurrogate).toBe(false);
    expect(scanJson('{"a": "\\uD83D\\uDE00 and \\u00e9"}', 64).loneSurrogate).toBe(false);
    expect(scanJson('{"a": "x\\ud800"}', 64).loneSurrogate).toBe(true);
    expect(scanJson('{"a": "\\udc00y"}', 64).loneSurrogate).toBe(true);
    expect(scanJson('{"\\ud800": 1}', 64).loneSurrogate).toBe(true);
    expect(scanJson('{"a": "\\ud800\\ud800\\udc00"}', 64).loneSurrogate).toBe(true);
    expect(scanJson('{"a": "\\ud800\\n"}', 64).loneSurrogate).toBe(true);
    // An escaped backslash followed by "ud800" is text, not an escape.
    expect(scanJson('{"a": "\\\\ud800"}', 64).loneSurrogate).toBe(false);
    // Raw UTF-8 (an emoji as bytes) is never a lone surrogate.
    expect(scanJson(Buffer.from('{"a": "😀"}'), 64).loneSurrogate).toBe(false);
  });
});

describe('valueDepth', () => {
  it('measures parsed values without recursion and gives up past the limit', () => {
    expect(valueDepth(1, 10)).toBe(0);
    expect(valueDepth({ a: [1, { b: {} }] }, 10)).toBe(4);
    expect(valueDepth(JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)), 32)).toBe(33);
  });
});

describe('loneSurrogatePath', () => {
  it('names the first member, in document order, whose value or name holds an unpaired surrogate', () => {
    expect(loneSurrogatePath({ a: 'ok', b: ['😀', { c: 'x\ud800' }], d: '\udc00' })).toBe('b.1.c');
    expect(loneSurrogatePath({ rows: [{ 'bad\udc00': 1 }] })).toBe('rows.0.bad\uFFFD');
    expect(loneSurrogatePath('\ud800')).toBe('(the body)');
    expect(loneSurrogatePath({ a: '😀', b: [1, null, true] })).toBeUndefined();
    expect(hasLoneSurrogate('a\ud800b')).toBe(true);
    expect(hasLoneSurrogate('😀')).toBe(false);
  });
});

describe('reservedMemberPath', () => {
  it('names the first member called __proto__ or constructor, however deep, and nothing else', () => {
    expect(reservedMemberPath(JSON.parse('{"a": 1, "__proto__": {"x": 1}}'))).toBe('__proto__');
    expect(reservedMemberPath(JSON.parse('{"rows": [{"q": 1}, {"constructor": {"prototype": 1}}]}'))).toBe(
      'rows.1.constructor',
    );
    expect(reservedMemberPath(JSON.parse('{"a": "__proto__", "b": ["constructor"], "prototype": 1}'))).toBeUndefined();
  });
});
