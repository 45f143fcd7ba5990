import { describe, expect, it } from '@jest/globals';
import { jsonbOutput } from '../datasets/ingest/jsonb-text.js';
import { jsonbStoredText, jsonbText } from './jsonb.js';

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
