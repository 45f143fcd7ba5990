import { generatorOnThread, siblingModule } from '../../../../libs/common/thread-generator.js';
import { RowRuleError } from '../rows.rules.js';
import { IngestError } from './row-sources.js';
import type { EncodedChunk } from '../../../../libs/database/copy-binary.js';
import { encodeUpload, TooManyRowsError, type UploadEncodingOptions, type UploadSummary } from './upload-encoding.js';

const WORKER = siblingModule(import.meta.url, 'upload-worker');

/**
 * The thread's young generation, by the database the rows go to. Embedded (COPY from a file
 * blob, the engine in this process, an RSS aim of 400 MB): 8 MB, so the parser's garbage is
 * collected sooner; measured on the `npm start` service, three 100,000-row uploads twice each,
 * peaks 432-478 MB at 8 MB against 460-524 MB at V8's default in about the same time (at 4 MB
 * uploads were slower). PostgreSQL (COPY streamed to a server of its own): 32 MB, where the
 * thread is the upload's slower side and the scavenger took a sixth of its time at 8 MB; in
 * alternating runs of bench/datasets.mjs (2026-11-27) 12 uploads took 1.13-1.93 s (mean 1.48)
 * against 6 at 8 MB taking 1.37-2.12 s (mean 1.80), the peak RSS 5-10 MB higher; 64 MB was no
 * faster and held 40 MB more. The old generation is not capped here (a cap would fail wide rows):
 * the thread gets the process's, V8's default for the API (docs/operations.md#node-flags).
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
