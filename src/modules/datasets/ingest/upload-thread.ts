import { generatorOnThread, siblingModule } from '../../../../libs/common/thread-generator.js';
import { RowRuleError } from '../rows.rules.js';
import { IngestError } from './row-sources.js';
import type { EncodedChunk } from '../../../../libs/database/copy-binary.js';
import { encodeUpload, TooManyRowsError, type UploadEncodingOptions, type UploadSummary } from './upload-encoding.js';

const WORKER = siblingModule(import.meta.url, 'upload-worker');

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
    errors: {
      IngestError: (f) => new IngestError(String(f.where), String(f.reason)),
      RowRuleError: (f) => new RowRuleError(String(f.where), String(f.reason)),
      TooManyRowsError: (f) => new TooManyRowsError(Number(f.maxRows)),
    },
  });
}
