import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { WordHashSet } from './hash-set.js';

describe('WordHashSet', () => {
  it('answers as a Set of the same keys does, through many growths (UUID-wide keys)', () => {
    const set = new WordHashSet(4, 8);
    const reference = new Set<string>();
    const keys: Uint32Array[] = [];
    for (let i = 0; i < 50_000; i++) {
      // Every third key repeats an earlier one.
      const key = i % 3 === 2 ? keys[(i * 7919) % keys.length] : new Uint32Array(randomBytes(16).buffer);
      keys.push(key);
      const text = Buffer.from(key.buffer, key.byteOffset, 16).toString('hex');
      expect(set.add(key)).toBe(!reference.has(text));
      reference.add(text);
    }
    expect(set.size).toBe(reference.size);
    // Kept at most half full.
    expect(set.bytes).toBeLessThanOrEqual(4 * 4 * 4 * reference.size);
    expect(set.bytes).toBeGreaterThanOrEqual(4 * 4 * 2 * reference.size);
  });

  it('tells keys that differ in one word only apart, and keeps an all-zero key', () => {
    const set = new WordHashSet(2);
    expect(set.add([0, 0])).toBe(true);
    expect(set.add([0, 0])).toBe(false);
    expect(set.add([1, 0])).toBe(true);
    expect(set.add([0xffffffff, 7])).toBe(true);
    expect(set.add([0xffffffff, 8])).toBe(true);
    expect(set.add([0xffffffff, 7])).toBe(false);
    expect(set.size).toBe(4);
  });
});
