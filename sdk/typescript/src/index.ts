/**
 * @ews/sdk: the Evaluation Workspace Service client.
 *
 *   import { createClient, paginate, EwsApiError } from '@ews/sdk';
 *   const client = createClient({ baseUrl: process.env.EWS_URL!, apiKey: process.env.EWS_API_KEY! });
 *
 * Also exports the generated EvaluationWorkspaceClient and every request and response type.
 */
export {
  createClient,
  EwsClient,
  type ApiKeyOptions,
  type ClientOptions,
  type DatasetUpload,
  type PasswordOptions,
  type TraceFileUpload,
} from './client.js';
export { EwsApiError, isEwsApiError, type Problem } from './errors.js';
export { isTerminalRunEvent, readServerSentEvents, type FollowOptions, type SseMessage } from './events.js';
export {
  pages,
  paginate,
  type ItemOf,
  type ListOperation,
  type Page,
  type PageQuery,
  type QueryOf,
} from './paginate.js';
export type { RetryOptions } from './transport.js';
export type { MultipartBody, UploadFile, UploadSource } from './upload.js';
export * from './generated/api.js';
