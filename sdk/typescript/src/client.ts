import {
  EvaluationWorkspaceClient,
  type DatasetResponse,
  type TokenRequest,
  type TokenResponse,
  type TraceUploadResponse,
  type UploadDatasetForm,
  type UploadDatasetParams,
  type UploadTraceFileParams,
} from './generated/api.js';
import { followRunEvents, TERMINAL_RUN_STATES, type FollowOptions } from './events.js';
import type { RunEventResponse } from './generated/api.js';
import { createTransport, DEFAULT_RETRY, type RetryOptions } from './transport.js';
import { multipartBody, type UploadFile } from './upload.js';

interface CommonOptions {
  /** The service's address, e.g. `https://ews.example.com`. */
  baseUrl: string;
  /** Headers for every request (e.g. a User-Agent naming your pipeline). */
  headers?: Record<string, string>;
  /** How 429 and 503 are retried (default `{ retries: 2, maxDelayMs: 30000 }`); `false` never retries. */
  retry?: RetryOptions | false;
  /** The fetch to send with (default: the global fetch of Node 20+, Deno, Bun or a browser). */
  fetch?: typeof fetch;
}

/** A machine, e.g. a CI job: an API key of one workspace (`ews_…`), sent as it is; nothing to renew. */
export interface ApiKeyOptions extends CommonOptions {
  apiKey: string;
  email?: never;
  password?: never;
}

/** A person: signs in (POST /auth/token) on the first call and again before the token expires. */
export interface PasswordOptions extends CommonOptions {
  email: string;
  password: string;
  apiKey?: never;
}

export type ClientOptions = ApiKeyOptions | PasswordOptions;

/** POST /datasets/upload: a new dataset, or with `fields.dataset_id` its next version. */
export interface DatasetUpload extends UploadFile {
  workspaceId: string;
  /** The other form fields as the API names them: name, description, tags, dataset_id, format, delimiter, message. */
  fields?: Omit<UploadDatasetForm, 'file'>;
}

/** POST /traces/uploads: a trace file to detect and land. */
export interface TraceFileUpload extends UploadFile {
  workspaceId: string;
}

/** A token is renewed this long before it expires (or at half its life when that is shorter). */
const RENEW_BEFORE_MS = 60_000;

/**
 * The Evaluation Workspace Service client: every operation of the generated
 * EvaluationWorkspaceClient (`client.datasets.listDatasets(…)`, named by operationId), signed
 * in by API key or password, with 429/503 retried and every failure thrown as EwsApiError;
 * plus upload helpers that stream files.
 */
export class EwsClient extends EvaluationWorkspaceClient<never> {
  readonly #send: typeof fetch;
  readonly #authorization: () => Promise<string>;

  constructor(options: ClientOptions) {
    const baseUrl = options.baseUrl?.replace(/\/+$/, '');
    if (!baseUrl) throw new TypeError('createClient: baseUrl is required, e.g. https://ews.example.com');
    const send = createTransport(
      options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      options.headers ?? {},
      options.retry === false ? { ...DEFAULT_RETRY, retries: 0 } : { ...DEFAULT_RETRY, ...options.retry },
    );
    const authorization = authorize(options, baseUrl, send);
    super({
      baseUrl,
      customFetch: send,
      securityWorker: async () => ({ headers: { Authorization: await authorization() } }),
    });
    this.#send = send;
    this.#authorization = authorization;
  }

  /** Uploads a CSV, JSON, JSON Lines or Parquet file as a dataset (members; see UploadSource for what `file` may be). */
  uploadDataset({ workspaceId, fields, ...file }: DatasetUpload): Promise<DatasetResponse> {
    return this.#upload(
      '/datasets/upload',
      { workspace_id: workspaceId } satisfies UploadDatasetParams,
      fields ?? {},
      file,
    );
  }

  /** Uploads a trace file (OTLP/JSON, JSON Lines, span records, OTLP/protobuf) to detect and land (members). */
  uploadTraceFile({ workspaceId, ...file }: TraceFileUpload): Promise<TraceUploadResponse> {
    return this.#upload('/traces/uploads', { workspace_id: workspaceId } satisfies UploadTraceFileParams, {}, file);
  }

  /**
   * A run's events as they happen (GET /runs/{run_id}/events/stream, Server-Sent Events), until
   * the event of its terminal state; a lost connection is resumed with `Last-Event-ID`.
   *
   *   for await (const event of client.followRunEvents(run.id)) if (event.type === 'progress') show(event.data);
   */
  followRunEvents(runId: string, options: FollowOptions = {}): AsyncGenerator<RunEventResponse> {
    return followRunEvents(
      {
        open: async (id, lastEventId, signal) => {
          const headers: Record<string, string> = {
            Accept: 'text/event-stream',
            Authorization: await this.#authorization(),
          };
          if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId;
          const response = await this.#send(`${this.baseUrl}/runs/${encodeURIComponent(id)}/events/stream`, {
            headers,
            signal,
          });
          if (!response.body) throw new Error(`the event stream of run ${id} has no body`);
          return response.body;
        },
        ended: async (id) => TERMINAL_RUN_STATES.includes((await this.runs.getRun({ runId: id })).state),
      },
      runId,
      options,
    );
  }

  /**
   * The generated operations send multipart bodies as FormData, which holds in-memory Blobs
   * only; the helpers write the body themselves (upload.ts) and send it through the same
   * transport, so that a stream is sent as it is read. `redirect: 'error'`: to follow a
   * redirect Node's fetch (undici) keeps every byte of the body sent, the whole file in memory.
   */
  async #upload<T>(path: string, query: Record<string, string>, fields: object, file: UploadFile): Promise<T> {
    const { body, contentType } = await multipartBody({ ...fields }, file);
    const init = {
      method: 'POST',
      body,
      duplex: 'half',
      redirect: 'error',
      headers: { 'Content-Type': contentType, Authorization: await this.#authorization() },
    } satisfies RequestInit & { duplex: 'half' };
    const response = await this.#send(`${this.baseUrl}${path}${this.addQueryParams(query)}`, init);
    return (await response.json()) as T;
  }
}

/** A client for the service; see ClientOptions. */
export function createClient(options: ClientOptions): EwsClient {
  return new EwsClient(options);
}

/** The Authorization header of the next request. */
function authorize(options: ClientOptions, baseUrl: string, send: typeof fetch): () => Promise<string> {
  if (typeof options.apiKey === 'string' && options.apiKey) {
    const header = `Bearer ${options.apiKey}`;
    return async () => header;
  }
  if (!options.email || !options.password) throw new TypeError('createClient: pass apiKey, or email and password');
  const credentials: TokenRequest = { email: options.email, password: options.password };
  let current: { header: string; renewAt: number } | undefined;
  let signingIn: Promise<string> | undefined;
  const signIn = async () => {
    const response = await send(`${baseUrl}/auth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(credentials),
    });
    const token = (await response.json()) as TokenResponse;
    const lifetimeMs = token.expires_in * 1000;
    current = {
      header: `Bearer ${token.access_token}`,
      renewAt: Date.now() + Math.max(lifetimeMs - RENEW_BEFORE_MS, lifetimeMs / 2),
    };
    return current.header;
  };
  // Concurrent calls share one sign-in.
  return () =>
    current && Date.now() < current.renewAt
      ? Promise.resolve(current.header)
      : (signingIn ??= signIn().finally(() => (signingIn = undefined)));
}
