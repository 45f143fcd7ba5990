import { generatorOnThread, siblingModule } from '#libs/common/thread-generator.js';
import { RowRuleError } from '../rows/rows.rules.js';
import { IngestError } from './row-sources.js';
import type { EncodedChunk } from '#libs/database/copy-binary.js';
import { encodeUpload, TooManyRowsError, type UploadEncodingOptions, type UploadSummary } from './upload-encoding.js';

const WORKER = siblingModule(import.meta.url, 'upload-worker');

/**
 * The thread's young generation, by the database the rows go to. Embedded (COPY from a file
 * blob, the engine in this process, an RSS aim of 400 MB): small, so the parser's garbage is
 * collected sooner and the upload's peak is lower in about the same time (smaller still was
 * slower). PostgreSQL (COPY streamed to a server of its own): larger, since there the thread is
 * the upload's slower side and a small young generation made the scavenger a large part of its
 * time; larger still was no faster and held more. The figures:
 * docs/performance.md#the-upload-threads-young-generation. The old generation is not capped here
 * (a cap would fail wide rows): the thread gets the process's, V8's default for the API
 * (docs/operations.md#node-flags).
 */
const YOUNG_GENERATION_MB: Record<UploadEncodingOptions['framing'], number> = { file: 8, stream: 32 };

/**
 * An upload's rows encoded for COPY. A file of `minThreadBytes` or more (UPLOAD_THREAD_MIN_BYTES)
 * is read and encoded on a worker thread of its own, so that parsing overlaps the database's COPY
 * (on the embedded database both would otherwise share node's one thread) and the event loop
 * stays free for requests; a smaller file is done sooner here than a thread starts.
 */
export function encodedUpload(
  options: UploadEncodingOptions,
  fileBytes: number,
  minThreadBytes: number,
): AsyncGenerator<EncodedChunk, UploadSummary> {
  if (fileBytes < minThreadBytes) return encodeUpload(options);
  return generatorOnThread<EncodedChunk, UploadSummary>(WORKER, options, {
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB[options.framing] },
    errors: {
      IngestError: (f) => new IngestError(String(f.where), String(f.reason)),
      RowRuleError: (f) => new RowRuleError(String(f.where), String(f.reason)),
      TooManyRowsError: (f) => new TooManyRowsError(Number(f.maxRows)),
    },
  });
}
