import { Inject, Injectable } from '@nestjs/common';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import {
  COPY_BINARY_HEADER,
  COPY_BINARY_TRAILER,
  CopyBinaryEncoder,
  type CopyType,
  type CopyValue,
} from './copy-binary.js';
import type { OpenedDatabase } from './data-source.factory.js';
import { OPENED_DATABASE } from './data-source.factory.js';
import { Db } from './unit-of-work.js';

export interface BulkColumn {
  name: string;
  /** PostgreSQL type of the column: how its values are encoded (uuid, integer, bigint, jsonb, text). */
  type: CopyType;
}

/** A value to write: strings, numbers, null; jsonb values are passed already serialised. */
export type BulkValue = CopyValue;

/** The embedded database takes its COPY a blob at a time: about this many bytes each (memory stays bounded). */
const EMBEDDED_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * A Blob over bytes already in memory. PGlite reads the file of `COPY … FROM '/dev/blob'` through
 * `arrayBuffer()`, which here hands over the buffer itself: a Blob built from bytes copies them,
 * and its `arrayBuffer()` copies them again, two more copies of every chunk that stay in memory
 * until a collection (about 90 MB at the peak of a 100,000-row upload). The other readers give the
 * same bytes through a Blob of a copy.
 */
export class ArrayBufferBlob extends Blob {
  override readonly size: number;

  constructor(private readonly buffer: ArrayBuffer) {
    super([]);
    this.size = buffer.byteLength;
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

  /** `batches` may be an array of batches (`[rows]` for one) or an async source that yields them as they are read. */
  async append(
    table: string,
    columns: BulkColumn[],
    batches: AsyncIterable<BulkValue[][]> | Iterable<BulkValue[][]>,
  ): Promise<number> {
    if (!this.db.manager.queryRunner?.isTransactionActive)
      throw new Error(`BulkWriter.append(${table}) runs inside a unit of work (TransactionRunner.run)`);
    const sql = `COPY ${table} (${columns.map((c) => `"${c.name}"`).join(', ')}) FROM`;
    const encoder = new CopyBinaryEncoder(columns.map((c) => c.type));
    let written = 0;
    const pglite = this.opened.db?.pglite;
    if (pglite) {
      const flush = async () => {
        if (!encoder.bytes) return;
        await pglite.query(`${sql} '/dev/blob' (FORMAT binary)`, [], { blob: new ArrayBufferBlob(encoder.file()) });
      };
      for await (const batch of batches) {
        for (const row of batch) encoder.row(row);
        written += batch.length;
        if (encoder.bytes >= EMBEDDED_CHUNK_BYTES) await flush();
      }
      await flush();
      return written;
    }
    const client = (this.db.manager.queryRunner as unknown as { databaseConnection: PoolClient }).databaseConnection;
    const copy = client.query(copyFrom(`${sql} STDIN (FORMAT binary)`));
    async function* chunks() {
      yield COPY_BINARY_HEADER;
      for await (const batch of batches) {
        for (const row of batch) encoder.row(row);
        written += batch.length;
        yield encoder.take();
      }
      yield COPY_BINARY_TRAILER;
    }
    await pipeline(Readable.from(chunks(), { objectMode: false }), copy);
    return written;
  }
}
