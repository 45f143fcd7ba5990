import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomUUID } from 'node:crypto';
import { JobFailure } from '#libs/queue/job-outcome.js';
import { langfuseObservation, readTraceFile, recordSpans, sniffFormat, type ReadItem } from '#libs/traces/readers.js';
import type { TraceConnectionRow } from './traces.repository.js';
import { outboundFetch } from '#libs/common/outbound.js';

export interface ConnectionCredentials {
  /** Bearer token (otlp_file_url, phoenix) or Langfuse secret key */
  secret: string | null;
  /** Langfuse public key */
  publicKey: string | null;
}

export interface PullOptions {
  maxRecords: number;
  maxFileBytes: number;
  dataDir: string;
  signal: AbortSignal;
  timeoutMs?: number;
}

/**
 * Spans pulled from a source connection, page by page: an OTLP file at a URL (streamed to disk
 * first, size-limited), a Langfuse-compatible public API (traces, then each trace's
 * observations), or a Phoenix-compatible REST API (spans of a project by cursor).
 */
export async function* pullConnection(
  connection: TraceConnectionRow,
  credentials: ConnectionCredentials,
  options: PullOptions,
): AsyncGenerator<ReadItem> {
  if (connection.kind === 'otlp_file_url') yield* pullFile(connection, credentials, options);
  else if (connection.kind === 'langfuse') yield* pullLangfuse(connection, credentials, options);
  else yield* pullPhoenix(connection, credentials, options);
}

async function* pullFile(
  connection: TraceConnectionRow,
  credentials: ConnectionCredentials,
  options: PullOptions,
): AsyncGenerator<ReadItem> {
  const res = await request(connection.url, bearer(credentials), options);
  const dir = join(options.dataDir, 'trace-pulls');
  await mkdir(dir, { recursive: true });
  const path = join(dir, randomUUID());
  let bytes = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      done(
        bytes > options.maxFileBytes
          ? new JobFailure(
              `the file at the connection's URL is larger than ${options.maxFileBytes} bytes (UPLOAD_MAX_BYTES)`,
              { code: 'source_too_large', retry: false },
            )
          : null,
        chunk,
      );
    },
  });
  try {
    await pipeline(
      Readable.fromWeb(res.body as import('node:stream/web').ReadableStream),
      limit,
      createWriteStream(path),
      { signal: options.signal },
    );
    let n = 0;
    for await (const item of readTraceFile(path, await sniffFormat(path, new URL(connection.url).pathname))) {
      if (++n > options.maxRecords) return;
      yield item;
    }
  } finally {
    await rm(path, { force: true });
  }
}

async function* pullLangfuse(
  connection: TraceConnectionRow,
  credentials: ConnectionCredentials,
  options: PullOptions,
): AsyncGenerator<ReadItem> {
  const auth = {
    authorization: `Basic ${Buffer.from(`${credentials.publicKey ?? ''}:${credentials.secret ?? ''}`).toString('base64')}`,
  };
  const limit = connection.settings.page_size ?? 100;
  let n = 0;
  for (let page = 1; ; page++) {
    const traces = await json<{ data?: Array<Record<string, unknown>>; meta?: { totalPages?: number } }>(
      api(connection.url, '/api/public/traces', { page, limit }),
      auth,
      options,
    );
    const list = Array.isArray(traces.data) ? traces.data : [];
    for (const trace of list) {
      const context = { sessionId: trace.sessionId, userId: trace.userId, traceName: trace.name };
      for (let obsPage = 1; ; obsPage++) {
        const observations = await json<{ data?: Array<Record<string, unknown>>; meta?: { totalPages?: number } }>(
          api(connection.url, '/api/public/observations', { traceId: String(trace.id), page: obsPage, limit }),
          auth,
          options,
        );
        for (const o of observations.data ?? []) {
          if (++n > options.maxRecords) return;
          yield langfuseObservation(
            { traceId: trace.id, ...o },
            `trace ${String(trace.id)}, observation ${String(o.id)}`,
            context,
          );
        }
        if (!observations.data?.length || obsPage >= (observations.meta?.totalPages ?? obsPage)) break;
      }
    }
    if (!list.length || page >= (traces.meta?.totalPages ?? page)) return;
  }
}

async function* pullPhoenix(
  connection: TraceConnectionRow,
  credentials: ConnectionCredentials,
  options: PullOptions,
): AsyncGenerator<ReadItem> {
  const project = connection.settings.project ?? 'default';
  const limit = connection.settings.page_size ?? 100;
  let cursor: string | null = null;
  let n = 0;
  let page = 0;
  do {
    page++;
    const body: { data?: unknown[]; next_cursor?: string | null } = await json(
      api(connection.url, `/v1/projects/${encodeURIComponent(project)}/spans`, {
        limit,
        ...(cursor ? { cursor } : {}),
      }),
      bearer(credentials),
      options,
    );
    let i = 0;
    for (const span of body.data ?? []) {
      if (++n > options.maxRecords) return;
      yield* recordSpans(span, `page ${page}, span ${++i}`);
    }
    cursor = body.next_cursor ?? null;
  } while (cursor);
}

function bearer(credentials: ConnectionCredentials): Record<string, string> {
  return credentials.secret ? { authorization: `Bearer ${credentials.secret}` } : {};
}

function api(base: string, path: string, query: Record<string, string | number>): string {
  const url = new URL(base.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
  return url.toString();
}

async function request(url: string, headers: Record<string, string>, options: PullOptions): Promise<Response> {
  let res: Response;
  try {
    res = await outboundFetch(url, {
      headers: { accept: 'application/json, application/x-protobuf, */*', ...headers },
      signal: AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs ?? 60_000)]),
    });
  } catch (err) {
    if (options.signal.aborted) throw err;
    const cause = (err as Error).cause instanceof Error ? `: ${((err as Error).cause as Error).message}` : '';
    // A refused address will not become allowed by retrying.
    throw new JobFailure(`the source did not answer: ${(err as Error).message}${cause}`, {
      code: 'source_unreachable',
      retry: !cause.includes('never calls') && !cause.includes('OUTBOUND_BLOCK_PRIVATE'),
    });
  }
  if (!res.ok) {
    const text = (await res.text().catch(() => '')).slice(0, 300);
    // 4xx will not change by retrying (bad credentials, unknown project); 5xx and 429 may.
    throw new JobFailure(`the source answered ${res.status} for ${new URL(url).pathname}: ${text}`, {
      code: 'source_error',
      retry: res.status >= 500 || res.status === 429,
    });
  }
  return res;
}

async function json<T>(url: string, headers: Record<string, string>, options: PullOptions): Promise<T> {
  const res = await request(url, headers, options);
  try {
    return (await res.json()) as T;
  } catch {
    throw new JobFailure(`the source answered ${new URL(url).pathname} with something other than JSON`, {
      code: 'source_error',
      retry: false,
    });
  }
}
