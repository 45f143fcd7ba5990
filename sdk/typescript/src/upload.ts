/**
 * What an upload helper accepts as the file:
 * - a path (string; Node only): read from disk as the request goes, never whole into memory;
 * - bytes (a Uint8Array or Buffer) or a Blob (a File names itself);
 * - a stream: a web ReadableStream, a Node Readable (e.g. fs.createReadStream) or any async
 *   iterable of bytes or strings; sent as it is read, so the request cannot be retried.
 */
export type UploadSource = string | Uint8Array | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string>;

/** The file part of an upload. */
export interface UploadFile {
  /** The file: a path, bytes, a Blob or a stream (see UploadSource). */
  file: UploadSource;
  /** The name the service sees (it takes the format from its extension); defaults to the path's or the File's name. */
  filename?: string;
  /** The part's media type (default: the Blob's type, else application/octet-stream). */
  contentType?: string;
}

/** A multipart/form-data body: a Blob when the file's size is known, else a stream. */
export interface MultipartBody {
  contentType: string;
  body: Blob | ReadableStream<Uint8Array>;
}

/**
 * Writes the multipart body itself rather than through FormData: FormData holds Blobs only, so
 * a stream would have to be read whole into memory first. A path becomes a Blob backed by the
 * file (fs.openAsBlob), which the request reads from disk as it goes; the fields come first,
 * the file part last. Values that are not strings are sent as JSON (tags: ["a","b"]).
 */
export async function multipartBody(fields: Record<string, unknown>, upload: UploadFile): Promise<MultipartBody> {
  const boundary = `ews-sdk-${Array.from({ length: 4 }, () => Math.random().toString(36).slice(2, 10)).join('')}`;
  const { file } = upload;
  const content =
    typeof file === 'string' ? await openFile(file) : file instanceof Uint8Array ? new Blob([file]) : file;
  const filename =
    upload.filename ?? (typeof file === 'string' ? file.split(/[\\/]/).pop() : (content as { name?: unknown }).name);
  if (typeof filename !== 'string' || !filename)
    throw new TypeError(
      'Upload: pass `filename` (e.g. "rows.csv") with bytes, a Blob or a stream; the service takes the format from its extension',
    );
  const type = upload.contentType || (content instanceof Blob && content.type) || 'application/octet-stream';
  let head = '';
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined || value === null) continue;
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${typeof value === 'string' ? value : JSON.stringify(value)}\r\n`;
  }
  head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quote(filename)}"\r\nContent-Type: ${type}\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  const contentType = `multipart/form-data; boundary=${boundary}`;
  if (content instanceof Blob) return { contentType, body: new Blob([head, content, tail]) };
  return { contentType, body: streamed(head, content, tail) };
}

/** Names in Content-Disposition as the HTML standard escapes them. */
function quote(name: string): string {
  return name.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}

/** A file on disk as a Blob read lazily (Node >= 20.16; kept out of bundles: no import of node:fs). */
async function openFile(path: string): Promise<Blob> {
  const fs = globalThis.process?.getBuiltinModule?.('node:fs');
  if (!fs)
    throw new TypeError('Upload: a file path needs Node.js 20.16 or later; pass a Blob, bytes or a stream instead');
  return fs.openAsBlob(path);
}

/** head, then the source's chunks as they are read, then tail. */
function streamed(
  head: string,
  source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string>,
  tail: string,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const chunks: AsyncIterator<Uint8Array | string> =
    'getReader' in source ? readerIterator(source.getReader()) : source[Symbol.asyncIterator]();
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encoder.encode(head));
        return;
      }
      const next = await chunks.next();
      if (next.done) {
        controller.enqueue(encoder.encode(tail));
        controller.close();
      } else {
        controller.enqueue(typeof next.value === 'string' ? encoder.encode(next.value) : next.value);
      }
    },
    async cancel(reason) {
      await chunks.return?.(reason);
    },
  });
}

function readerIterator(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncIterator<Uint8Array> {
  return {
    next: async () => {
      const { done, value } = await reader.read();
      return done ? { done: true, value: undefined } : { done: false, value };
    },
    return: async (reason?: unknown) => {
      await reader.cancel(reason);
      return { done: true, value: undefined };
    },
  };
}
