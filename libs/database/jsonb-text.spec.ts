import { describe, expect, it } from '@jest/globals';
import { jsonbKeyOrder, jsonbOutput, jsonbStoredText, jsonbText } from './jsonb-text.js';

// What PostgreSQL prints for these values as jsonb (`SELECT $1::jsonb::text`); test/e2e/datasets/upload
// holds the same against the database itself.
describe('jsonbOutput', () => {
  it('orders members by their UTF-8 length, then bytewise, with jsonb spacing', () => {
    expect(jsonbOutput({ zz: 1, a: 2, é: 3, ab: 4, b: { y: [], x: {} } })).toBe(
      '{"a": 2, "b": {"x": {}, "y": []}, "ab": 4, "zz": 1, "é": 3}',
    );
    expect(['é', 'ab', 'a', 'ключ', 'zzzz'].sort(jsonbKeyOrder)).toEqual(['a', 'ab', 'é', 'zzzz', 'ключ']);
  });

  it('writes numbers in plain decimal notation', () => {
    // 1.2345678901234567e25 is not exactly representable: the test is that the double it becomes prints as PostgreSQL prints it.
    // eslint-disable-next-line no-loss-of-precision
    expect(jsonbOutput([1e21, 1.5e-7, -0, -2.5e-9, 1.2345678901234567e25, 0.000001, 100, 2.5])).toBe(
      '[1000000000000000000000, 0.00000015, 0, -0.0000000025, 12345678901234566000000000, 0.000001, 100, 2.5]',
    );
  });

  it('escapes strings as JSON.stringify does and leaves out what JSON cannot hold', () => {
    expect(jsonbOutput({ s: 'q"\\\n\t\u0001é', u: undefined, f: () => 1, a: [undefined, null, true] })).toBe(
      '{"a": [null, null, true], "s": "q\\"\\\\\\n\\t\\u0001é"}',
    );
    expect(jsonbOutput({ d: new Date('2026-01-02T03:04:05.000Z') })).toBe('{"d": "2026-01-02T03:04:05.000Z"}');
  });
});

describe('jsonbStoredText', () => {
  it('is the text jsonb prints for a value it can store as it is', () => {
    const value = { span_id: 'a', attributes: { ключ: 'é 😀', big: 1e21, list: [1, { b: 2, a: 1 }] }, n: null };
    expect(jsonbStoredText(value)).toBe(jsonbOutput(value));
    expect(JSON.parse(jsonbStoredText(value))).toEqual(value);
  });

  it('holds what jsonbText stores when a name or value has a NUL or an unpaired surrogate', () => {
    const value = { 'a\u0000b': 'x\u0000y', lone: 'half \ud800 pair', pair: '😀', inner: [{ 'k\udc00': 1 }] };
    const text = jsonbStoredText(value);
    expect(text).not.toMatch(/\\u0000|\\ud[89a-f]/);
    expect(JSON.parse(text)).toEqual(JSON.parse(jsonbText(value)));
    expect(text).toBe(jsonbOutput(JSON.parse(jsonbText(value))));
  });
});
