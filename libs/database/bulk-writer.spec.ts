import { describe, expect, it } from '@jest/globals';
import { ArrayBufferBlob } from './bulk-writer.js';

describe('ArrayBufferBlob', () => {
  const bytes = new TextEncoder().encode('PGCOPY rows');

  it('hands over its buffer itself, not a copy', async () => {
    const blob = new ArrayBufferBlob(bytes);
    expect(await blob.arrayBuffer()).toBe(bytes.buffer);
    expect(blob).toBeInstanceOf(Blob);
    expect(blob.size).toBe(11);
  });

  it('reads as any Blob of the same bytes does', async () => {
    const blob = new ArrayBufferBlob(bytes);
    expect(await blob.text()).toBe('PGCOPY rows');
    expect(Buffer.from(await blob.bytes()).toString()).toBe('PGCOPY rows');
    expect(await blob.slice(7).text()).toBe('rows');
    expect(await new Response(blob.stream()).text()).toBe('PGCOPY rows');
  });

  it('of a view of part of a buffer, gives that part alone', async () => {
    const blob = new ArrayBufferBlob(bytes.subarray(7));
    expect(blob.size).toBe(4);
    expect((await blob.arrayBuffer()).byteLength).toBe(4);
    expect(await blob.text()).toBe('rows');
  });
});
