// The floor an upload or a landing is compared with: the same rows as JSON documents COPYed into a
// bare table `(id bigint, data jsonb)`, no index, in a process of its own. Run by bench/datasets.mjs
// and bench/traces.mjs:
//
//   node bench/lib/plain-copy.mjs <postgres://… | pglite> <file> <csv|jsonl>
//   node bench/lib/plain-copy.mjs <postgres://…> <dataset id> dataset
//
//   dataset  a dataset's rows (as stored, jsonb text, in order) read from that database by this
//          process (not the measured service's), then COPYed as `jsonl`
//   csv    the datasets bench's CSV (header id,question,answer,language,difficulty,score): each line
//          is turned into its JSON document inside the timed part, as an upload must
//   jsonl  one JSON document a line (a landing's normalised spans)
//
// On PostgreSQL the rows stream through `COPY … FROM STDIN (FORMAT csv)` in chunks of 5,000; on
// the embedded database (a fresh PGlite under a temporary directory, as the product keeps its
// own on disk) through one `COPY … FROM '/dev/blob'`. It prints `{"ms":…,"rows":…}`.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const [target, file, given] = process.argv.slice(2);
if (!target || !file || !['csv', 'jsonl', 'dataset'].includes(given)) {
  console.error('usage: node bench/lib/plain-copy.mjs <postgres-url | pglite> <file> <csv|jsonl>');
  console.error('       node bench/lib/plain-copy.mjs <postgres-url> <dataset-id> dataset');
  process.exit(2);
}
const kind = given === 'dataset' ? 'jsonl' : given;
const text = given === 'dataset' ? await datasetRows(target, file) : readFileSync(file, 'utf8');

/** A dataset's rows as stored (jsonb text), one a line, in order. */
async function datasetRows(url, datasetId) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query(
    'SELECT data::text AS data FROM dataset_rows WHERE dataset_id = $1 AND removed_in IS NULL ORDER BY ordinal',
    [datasetId],
  );
  await client.end();
  return `${rows.map((r) => r.data).join('\n')}\n`;
}
const CSV_LINE = /^(\d+),"([^"]*)","([^"]*)",(\w+),(\d+),([\d.]+)$/;

/** The COPY's CSV lines `id,"document"`, chunk by chunk. */
function* chunks(size) {
  const lines = text.trim().split('\n');
  const header = kind === 'csv' ? lines.shift().split(',') : undefined;
  for (let i = 0; i < lines.length; i += size) {
    yield lines
      .slice(i, i + size)
      .map((line, k) => {
        if (kind === 'jsonl') return `${i + k},"${line.replace(/"/g, '""')}"\n`;
        const m = CSV_LINE.exec(line);
        const doc = {
          [header[0]]: Number(m[1]),
          [header[1]]: m[2],
          [header[2]]: m[3],
          [header[3]]: m[4],
          [header[4]]: Number(m[5]),
          [header[5]]: Number(m[6]),
        };
        return `${m[1]},"${JSON.stringify(doc).replace(/"/g, '""')}"\n`;
      })
      .join('');
  }
}

let result;
if (/^postgres(ql)?:/.test(target)) {
  const { default: pg } = await import('pg');
  const { from: copyFrom } = await import('pg-copy-streams');
  const client = new pg.Client({ connectionString: target });
  await client.connect();
  await client.query('CREATE TABLE bench_copy (id bigint, data jsonb)');
  const started = performance.now();
  await pipeline(
    Readable.from(chunks(5000)),
    client.query(copyFrom('COPY bench_copy (id, data) FROM STDIN (FORMAT csv)')),
  );
  const ms = performance.now() - started;
  const { rows } = await client.query('SELECT count(*)::int AS n FROM bench_copy');
  await client.query('DROP TABLE bench_copy');
  await client.end();
  result = { ms, rows: rows[0].n };
} else {
  const { PGlite } = await import('@electric-sql/pglite');
  const dir = mkdtempSync(join(tmpdir(), 'ews-plain-copy-'));
  try {
    const db = await PGlite.create(join(dir, 'pgdata'));
    await db.query('CREATE TABLE bench_copy (id bigint, data jsonb)');
    const started = performance.now();
    await db.query("COPY bench_copy (id, data) FROM '/dev/blob' (FORMAT csv)", [], {
      blob: new Blob([...chunks(5000)]),
    });
    const ms = performance.now() - started;
    const { rows } = await db.query('SELECT count(*)::int AS n FROM bench_copy');
    await db.close();
    result = { ms, rows: rows[0].n };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(JSON.stringify(result));
