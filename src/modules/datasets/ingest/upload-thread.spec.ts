import { afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endIdleThreads } from '#libs/common/thread-generator.js';
import { RowRuleError } from '../rows/rows.rules.js';
import { IngestError } from './row-sources.js';
import { TooManyRowsError, type UploadEncodingOptions } from './upload-encoding.js';
import { encodedUpload } from './upload-thread.js';
import { within } from '../../../../test/utils/within.js';

const dir = mkdtempSync(join(tmpdir(), 'upload-thread-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await endIdleThreads();
});

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

function options(path: string, more: Partial<UploadEncodingOptions> = {}): UploadEncodingOptions {
  return {
    path,
    format: 'csv',
    maxRows: 1_000_000,
    datasetId: '3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b',
    version: 2,
    firstOrdinal: 10,
    framing: 'file',
    chunkBytes: 64 * 1024,
    ...more,
  };
}

async function collect(options: UploadEncodingOptions, minThreadBytes: number) {
  const chunks: Array<{ bytes: Buffer; rows: number }> = [];
  const values = encodedUpload(options, 1000, minThreadBytes);
  for (;;) {
    const step = await values.next();
    if (step.done) return { chunks, summary: step.value };
    chunks.push({ bytes: Buffer.from(step.value.bytes), rows: step.value.rows });
  }
}

describe('encodedUpload', () => {
  // Rows with ids of their own: both runs encode the very same bytes.
  const rows = Array.from({ length: 3000 }, (_, i) => `${randomUUID()},q${i},${i % 7},"a, ""quoted"" ${i}"`);
  const csv = file('rows.csv', `_row_id,question,n,answer\n${rows.join('\n')}\n`);

  it.each(['file', 'stream'] as const)(
    'encodes the same rows, chunks and summary on a worker thread as on this one (%s framing)',
    async (framing) => {
      const here = await collect(options(csv, { framing }), Infinity);
      const there = await collect(options(csv, { framing }), 0);
      expect(there).toEqual(here);
      expect(here.chunks.length).toBeGreaterThan(1);
      expect(here.chunks.reduce((n, c) => n + c.rows, 0)).toBe(3000);
      expect(here.summary).toMatchObject({
        rowCount: 3000,
        nextOrdinal: 3010,
        columnOrder: ['question', 'n', 'answer'],
        uncounted: [],
      });
      expect(here.summary.columns.find((c) => c.name === 'n')).toMatchObject({ type: 'integer', distinct_count: 7 });
      if (framing === 'file')
        for (const chunk of here.chunks) expect(chunk.bytes.subarray(0, 6).toString()).toBe('PGCOPY');
    },
  );

  it.each(['csv', 'json'] as const)(
    'closes the file when a row breaks a rule half way through it (%s)',
    async (format) => {
      const many = Array.from({ length: 50_000 }, (_, i) => ({ a: i }));
      many[10] = { _row_id: 'nope' } as never;
      const path =
        format === 'csv'
          ? file(
              'half.csv',
              `_row_id,a\n${many.map((r) => `${(r as { _row_id?: string })._row_id ?? ''},${r.a ?? ''}`).join('\n')}\n`,
            )
          : file('half.json', JSON.stringify(many));
      const open = () => readdirSync('/proc/self/fd').length;
      const before = open();
      const caught = await collect(options(path, { format }), Infinity).catch((err: unknown) => err);
      expect(caught).toBeInstanceOf(RowRuleError);
      // The stream closes its descriptor a moment after the error; on a loaded machine more than a
      // fixed pause's moment. Never closed, this fails after the bound.
      await within(5_000, async () => open() <= before);
    },
  );

  it.each([
    ['malformed file', file('bad.csv', 'a,b\n1,2\n3\n'), {}, IngestError, { where: 'line 3' }],
    ['row rule', file('id.csv', '_row_id,a\nnope,1\n'), {}, RowRuleError, { where: 'record 1' }],
    ['too many rows', file('many.csv', 'a\n1\n2\n3\n'), { maxRows: 2 }, TooManyRowsError, { maxRows: 2 }],
  ] as const)('throws a %s as its own class from either thread', async (_what, path, more, kind, fields) => {
    for (const minThreadBytes of [Infinity, 0]) {
      const caught = await collect(options(path, more), minThreadBytes).catch((err: unknown) => err);
      expect(caught).toBeInstanceOf(kind);
      expect(caught).toMatchObject(fields);
    }
  });
});
