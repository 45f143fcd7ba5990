import { Inject, Injectable } from '@nestjs/common';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import {
  COPY_BINARY_HEADER,
  COPY_BINARY_TRAILER,
  CopyBinaryEncoder,
  type CopyFraming,
  type CopyType,
  type CopyValue,
  type EncodedChunk,
} from './copy-binary.js';
import type { OpenedDatabase } from './data-source.factory.js';
import { OPENED_DATABASE } from './data-source.factory.js';
import { engineTurns } from './pglite-connection.js';
import { Db } from './unit-of-work.js';

export interface BulkColumn {
  name: string;
  /** PostgreSQL type of the column: how its values are encoded (uuid, integer, bigint, jsonb, text). */
  type: CopyType;
}

/** A value to write: strings, numbers, null; jsonb values are passed already serialised. */
export type BulkValue = CopyValue;

/**
 * Encoded rows reach the COPY in chunks of about this many bytes: PostgreSQL's as a stream, the
 * embedded database's a blob at a time. Memory stays bounded, and what is left to copy when the
 * encoding ends is small: 1-MiB chunks were a little faster than 4-MiB ones for an embedded
 * upload, the peak RSS no higher (docs/performance.md#dataset-uploads).
 */
const CHUNK_BYTES = 1024 * 1024;

/**
 * On the embedded database, how a bulk write treats GIN indexes' pending lists (the row index's:
 * migration 1766400000000 leaves it at the engine's default, 4 MB). The first
 * EMBEDDED_DEFERRED_GIN_ROWS rows may fill a list up to EMBEDDED_DEFERRED_GIN_LIMIT and leave it to
 * the merge queued after the write (an upload of 100,000 rows answers as fast as it did when every
 * merge was deferred); past them the write merges as it goes, 4 MB at a time. PGlite runs on the
 * service's thread and a merge is one statement that holds it: the merge of a 1,000,000-row
 * upload's deferred list held every request for seconds, 4 MB at a time the longest statement
 * took about a tenth of that (docs/performance.md#dataset-uploads). On PostgreSQL the index
 * keeps its 128-MB list and the merge runs on a connection of its own.
 */
export const EMBEDDED_DEFERRED_GIN_ROWS = 100_000;
/**
 * How long PostgreSQL's `COPY … FROM STDIN` may stay open. The pool's read timeout (a minute,
 * data-source.factory.ts) counts from a statement's start, and a COPY stays open while its source
 * is read, parsed and encoded: a large upload on a busy service took longer and answered 500. The
 * producer sets a COPY's pace, so its own bound is the longest upload, not a server's silence.
 */
export const COPY_READ_TIMEOUT_MS = 6 * 60 * 60 * 1000;
export const EMBEDDED_DEFERRED_GIN_LIMIT = '16MB';

/**
 * A Blob over bytes already in memory. PGlite reads the file of `COPY … FROM '/dev/blob'` through
 * `arrayBuffer()`, which here hands over the buffer itself: a Blob built from bytes copies them,
 * and its `arrayBuffer()` copies them again, two more copies of every chunk that stay in memory
 * until a collection (docs/performance.md#copies-of-copy-chunks). The other readers give the
 * same bytes through a Blob of a copy.
 */
export class ArrayBufferBlob extends Blob {
  override readonly size: number;

  private readonly buffer: ArrayBuffer;

  constructor(bytes: Uint8Array) {
    super([]);
    // A view of part of its buffer (none here does that) gives its part as a buffer of its own.
    this.buffer =
      bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
        ? (bytes.buffer as ArrayBuffer)
        : bytes.slice().buffer;
    this.size = bytes.byteLength;
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(this.buffer);
  }

  override bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return Promise.resolve(new Uint8Array(this.buffer));
  }

  override text(): Promise<string> {
    return Promise.resolve(Buffer.from(this.buffer).toString('utf8'));
  }

  override slice(start?: number, end?: number, type?: string): Blob {
    return new Blob([this.buffer]).slice(start, end, type);
  }

  override stream(): ReturnType<Blob['stream']> {
    return new Blob([this.buffer]).stream();
  }
}

/**
 * Appends many rows in the open unit of work's transaction with one binary `COPY` (format:
 * libs/database/copy-binary.ts). On PostgreSQL every batch streams into one `COPY … FROM STDIN`;
 * PGlite's node-postgres adapter cannot carry COPY's sub-protocol, so the embedded engine is
 * handed the encoded rows as a blob, `COPY … FROM '/dev/blob'`, a few megabytes at a time, on its
 * one connection and so inside the same transaction. If the source throws (a malformed file),
 * the COPY is aborted and the error propagates, so the transaction rolls back with nothing written.
 */
@Injectable()
export class BulkWriter {
  constructor(
    @Inject(OPENED_DATABASE) private readonly opened: { db?: OpenedDatabase },
    private readonly db: Db,
  ) {}

  /** How this database takes encoded rows (`copy`), and in chunks of about how many bytes. */
  get chunking(): { framing: CopyFraming; chunkBytes: number } {
    return { framing: this.opened.db?.pglite ? 'file' : 'stream', chunkBytes: CHUNK_BYTES };
  }

  /** `batches` may be an array of batches (`[rows]` for one) or an async source that yields them as they are read. */
  append(
    table: string,
    columns: readonly BulkColumn[],
    batches: AsyncIterable<BulkValue[][]> | Iterable<BulkValue[][]>,
  ): Promise<number> {
    const encoder = new CopyBinaryEncoder(columns.map((c) => c.type));
    const { framing } = this.chunking;
    async function* encoded(): AsyncGenerator<EncodedChunk> {
      let rows = 0;
      for await (const batch of batches) {
        for (const row of batch) encoder.row(row);
        rows += batch.length;
        if (framing === 'file' && encoder.bytes < CHUNK_BYTES) continue;
        yield { bytes: encoder.chunk(framing), rows };
        rows = 0;
      }
      if (rows) yield { bytes: encoder.chunk(framing), rows };
    }
    return this.copy(table, columns, encoded());
  }

  /**
   * Writes rows already encoded in COPY's binary format, framed as `framing` says (a worker
   * thread encodes an upload's rows while the database takes the previous chunk). Answers the rows written.
   */
  async copy(table: string, columns: readonly BulkColumn[], chunks: AsyncIterable<EncodedChunk>): Promise<number> {
    if (!this.db.manager.queryRunner?.isTransactionActive)
      throw new Error(`BulkWriter.copy(${table}) runs inside a unit of work (TransactionRunner.run)`);
    const sql = `COPY ${table} (${columns.map((c) => `"${c.name}"`).join(', ')}) FROM`;
    let written = 0;
    const pglite = this.opened.db?.pglite;
    if (pglite) {
      const turns = engineTurns(pglite);
      await this.db.query(`SET LOCAL gin_pending_list_limit = '${EMBEDDED_DEFERRED_GIN_LIMIT}'`);
      let deferring = true;
      for await (const chunk of chunks) {
        if (deferring && written >= EMBEDDED_DEFERRED_GIN_ROWS) {
          await this.db.query('SET LOCAL gin_pending_list_limit TO DEFAULT');
          deferring = false;
        }
        // Chunks come from a worker thread as fast as the engine takes them: without a turn between, an upload's
        // COPY statements held every request of the service for a second at a time (docs/performance.md#dataset-uploads).
        await turns.take();
        await pglite.query(`${sql} '/dev/blob' (FORMAT binary)`, [], { blob: new ArrayBufferBlob(chunk.bytes) });
        written += chunk.rows;
      }
      return written;
    }
    const client = (this.db.manager.queryRunner as unknown as { databaseConnection: PoolClient }).databaseConnection;
    const copy = client.query(
      Object.assign(copyFrom(`${sql} STDIN (FORMAT binary)`), { query_timeout: COPY_READ_TIMEOUT_MS }),
    );
    async function* framed() {
      yield COPY_BINARY_HEADER;
      for await (const chunk of chunks) {
        written += chunk.rows;
        yield chunk.bytes;
      }
      yield COPY_BINARY_TRAILER;
    }
    await pipeline(Readable.from(framed(), { objectMode: false }), copy);
    return written;
  }
}
