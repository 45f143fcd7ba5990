/**
 * PostgreSQL's binary COPY format, written straight into one growing buffer per chunk of rows.
 * Binary spares the server the CSV scan of every field and the client the quoting of every
 * JSON document (CSV doubles each `"`: a quarter of an upload's CPU in node). pg-copy-streams-binary
 * offers the same format, but makes a Buffer per field and a stream per row; here a chunk of
 * thousands of rows is one allocation.
 * https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.4
 */

/** PostgreSQL type of a column: how its values are encoded. */
export type CopyType = 'uuid' | 'integer' | 'bigint' | 'jsonb' | 'text';

/** A value to write: strings, numbers, null; jsonb values are passed already serialised. */
export type CopyValue = string | number | null;

/**
 * How a COPY's reader takes encoded rows: `stream`, one COPY over many chunks (PostgreSQL's
 * `FROM STDIN`; the writer writes the header and trailer around them); `file`, every chunk a
 * whole COPY file of its own (the embedded database's /dev/blob).
 */
export type CopyFraming = 'stream' | 'file';

/** Rows encoded in COPY's binary format: `bytes` holds `rows` rows, as a whole file when the framing is `file`. */
export interface EncodedChunk {
  bytes: Uint8Array;
  rows: number;
}

/** Signature, flags (no OIDs), header extension length. */
export const COPY_BINARY_HEADER = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
/** The field count -1 that ends the data. */
export const COPY_BINARY_TRAILER = Buffer.from([0xff, 0xff]);

const HEX: number[] = [];
for (let i = 0; i < 256; i++) HEX[i] = -1;
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) HEX[65 + i] = HEX[97 + i] = 10 + i;

/** Rows encoded one after another into a buffer that doubles when full. */
export class CopyBinaryEncoder {
  private buf: Buffer;
  private at = 0;

  constructor(
    private readonly types: CopyType[],
    initialBytes = 1 << 20,
  ) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  get bytes(): number {
    return this.at;
  }

  /** Appends one row; its values in the order of the columns. */
  row(values: readonly CopyValue[]): void {
    const types = this.types;
    this.room(2);
    this.at = this.buf.writeInt16BE(types.length, this.at);
    for (let i = 0; i < types.length; i++) {
      const value = values[i];
      if (value === null || value === undefined) {
        this.room(4);
        this.at = this.buf.writeInt32BE(-1, this.at);
        continue;
      }
      switch (types[i]) {
        case 'uuid':
          this.uuid(String(value));
          break;
        case 'integer':
          this.room(8);
          this.at = this.buf.writeInt32BE(4, this.at);
          this.at = this.buf.writeInt32BE(Number(value), this.at);
          break;
        case 'bigint': {
          const n = Number(value);
          this.room(12);
          this.at = this.buf.writeInt32BE(8, this.at);
          // Two's complement in two halves: exact for every integer a double holds.
          this.at = this.buf.writeInt32BE(Math.floor(n / 4294967296), this.at);
          this.at = this.buf.writeUInt32BE(n >>> 0, this.at);
          break;
        }
        case 'jsonb':
          this.text(String(value), true);
          break;
        case 'text':
          this.text(String(value), false);
          break;
      }
    }
  }

  /** The rows encoded so far (a view of the buffer, valid until the next row), and starts over. */
  take(): Buffer {
    const out = this.buf.subarray(0, this.at);
    // The next chunk writes into a fresh buffer (the caller may still be sending this one), sized for one like it.
    this.buf = Buffer.allocUnsafe(Math.max(1 << 16, Math.ceil(this.at * 1.25)));
    this.at = 0;
    return out;
  }

  /**
   * The rows encoded so far as a whole COPY file (header, rows, trailer) in an ArrayBuffer of its
   * exact size, their one copy; starts over in the same buffer. For a reader that takes the file at
   * once and is done with it before the next rows are encoded (the embedded database's /dev/blob).
   */
  file(): ArrayBuffer {
    const out = new Uint8Array(COPY_BINARY_HEADER.length + this.at + COPY_BINARY_TRAILER.length);
    out.set(COPY_BINARY_HEADER, 0);
    out.set(this.buf.subarray(0, this.at), COPY_BINARY_HEADER.length);
    out.set(COPY_BINARY_TRAILER, COPY_BINARY_HEADER.length + this.at);
    this.at = 0;
    return out.buffer;
  }

  /** The rows encoded so far as the framing's reader takes them (`take` for a stream, `file` for a file), and starts over. */
  chunk(framing: CopyFraming): Uint8Array {
    return framing === 'file' ? new Uint8Array(this.file()) : this.take();
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.at + bytes) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }

  private uuid(text: string): void {
    if (text.length !== 36) throw new Error(`not a UUID: ${text.slice(0, 40)}`);
    this.room(20);
    const buf = this.buf;
    let at = buf.writeInt32BE(16, this.at);
    for (let i = 0; i < 36; i++) {
      const c = text.charCodeAt(i);
      if (c === 45) continue; // '-'
      const hi = HEX[c] ?? -1;
      const lo = HEX[text.charCodeAt(++i)] ?? -1;
      if (hi < 0 || lo < 0) throw new Error(`not a UUID: ${text}`);
      buf[at++] = (hi << 4) | lo;
    }
    if (at !== this.at + 20) throw new Error(`not a UUID: ${text}`);
    this.at = at;
  }

  /** UTF-8 text, after the jsonb format's version byte (1) when `jsonb`. */
  private text(value: string, jsonb: boolean): void {
    // At most three bytes per UTF-16 unit; the length is written once the text is.
    this.room(5 + value.length * 3);
    const start = this.at + 4;
    let at = start;
    if (jsonb) this.buf[at++] = 1;
    at += this.buf.write(value, at, 'utf8');
    this.buf.writeInt32BE(at - start, this.at);
    this.at = at;
  }
}
