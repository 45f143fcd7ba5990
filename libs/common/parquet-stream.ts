import { ByteWriter } from 'hyparquet-writer';
import { once } from 'node:events';
import type { Writable } from 'node:stream';

/** A hyparquet ByteWriter that hands its bytes to a stream every megabyte, waiting for drain, so a Parquet file never sits whole in memory. */
export function streamWriter(out: Writable): ByteWriter & { flush(): Promise<void> } {
  const writer = new ByteWriter() as ByteWriter & { flush(): Promise<void> };
  const chunkSize = 1_000_000;
  let pending: Promise<void> | undefined;
  const flush = () => {
    const chunk = new Uint8Array(writer.buffer.slice(0, writer.index));
    writer.index = 0;
    if (chunk.length && !out.write(chunk)) pending = once(out, 'drain').then(() => undefined);
  };
  const ensure = writer.ensure.bind(writer);
  writer.ensure = (size: number) => {
    if (writer.index > chunkSize) flush();
    ensure(size);
  };
  writer.flush = async () => {
    flush();
    if (pending) await pending;
    pending = undefined;
  };
  writer.finish = () => flush();
  return writer;
}
