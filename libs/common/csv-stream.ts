import { stringify, type Options } from 'csv-stringify';
import { once } from 'node:events';
import type { Writable } from 'node:stream';

/**
 * Writes CSV records to `out` as they come, waiting on back-pressure both ways (the stringifier's
 * and the response's), so memory stays bounded however many records there are. Leaves `out` open.
 */
export async function writeCsv(out: Writable, options: Options, records: AsyncIterable<unknown[]>): Promise<void> {
  const csv = stringify(options);
  const piping = new Promise<void>((resolve, reject) => {
    csv.on('data', (chunk: Buffer) => {
      if (!out.write(chunk)) {
        csv.pause();
        out.once('drain', () => csv.resume());
      }
    });
    csv.on('end', resolve);
    csv.on('error', reject);
  });
  for await (const record of records) if (!csv.write(record)) await once(csv, 'drain');
  csv.end();
  await piping;
}
