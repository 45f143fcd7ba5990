/**
 * The worker thread of an upload (upload-thread.ts): reads and encodes the file's rows
 * (upload-encoding.ts) and hands each chunk over, its bytes moved rather than copied.
 */
import { serveGenerator } from '#libs/common/thread-generator.js';
import { encodeUpload } from './upload-encoding.js';

serveGenerator(encodeUpload, (chunk) => [chunk.bytes.buffer as ArrayBuffer]);
