import { describe, expect, it } from '@jest/globals';
import { COPY_BINARY_HEADER, COPY_BINARY_TRAILER, CopyBinaryEncoder } from './copy-binary.js';

describe('CopyBinaryEncoder', () => {
  it('writes each field with its length: uuid as 16 bytes, integers big-endian, jsonb after its version byte, null as -1', () => {
    const encoder = new CopyBinaryEncoder(['uuid', 'integer', 'bigint', 'jsonb', 'text'], 8);
    encoder.row(['01234567-89ab-cdef-0123-456789abcdef', -2, -4294967297, '{"é": 1}', null]);
    const out = encoder.take();
    const expected = Buffer.concat([
      Buffer.from([0, 5]),
      Buffer.from([0, 0, 0, 16]),
      Buffer.from('0123456789abcdef0123456789abcdef', 'hex'),
      Buffer.from([0, 0, 0, 4, 0xff, 0xff, 0xff, 0xfe]),
      Buffer.from([0, 0, 0, 8, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xff]),
      Buffer.from([0, 0, 0, 10, 1]),
      Buffer.from('{"é": 1}', 'utf8'),
      Buffer.from([0xff, 0xff, 0xff, 0xff]),
    ]);
    expect(out.equals(expected)).toBe(true);
    expect(encoder.bytes).toBe(0);
  });

  it('file(): the rows so far between header and trailer, in a buffer of that exact size; the next file starts over', () => {
    const encoder = new CopyBinaryEncoder(['integer', 'text'], 4);
    encoder.row([1, 'a']);
    encoder.row([2, null]);
    const rows = Buffer.from([
      0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1, 97, 0, 2, 0, 0, 0, 4, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff,
    ]);
    const first = encoder.file();
    expect(Buffer.from(first).equals(Buffer.concat([COPY_BINARY_HEADER, rows, COPY_BINARY_TRAILER]))).toBe(true);
    expect(encoder.bytes).toBe(0);
    encoder.row([3, 'b']);
    const second = Buffer.from(encoder.file());
    expect(second.subarray(COPY_BINARY_HEADER.length, second.length - COPY_BINARY_TRAILER.length)).toEqual(
      Buffer.from([0, 2, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 1, 98]),
    );
    expect(Buffer.from(first).subarray(COPY_BINARY_HEADER.length, COPY_BINARY_HEADER.length + 2)).toEqual(
      Buffer.from([0, 2]),
    );
  });

  it('refuses what is not a UUID', () => {
    const encoder = new CopyBinaryEncoder(['uuid']);
    expect(() => encoder.row(['not-a-uuid'])).toThrow(/not a UUID/);
    expect(() => encoder.row(['01234567-89ab-cdef-0123-456789abcdeg'])).toThrow(/not a UUID/);
  });
});
