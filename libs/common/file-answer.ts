import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Writable } from 'node:stream';

/**
 * A file a service answers with, as a value: the controller sends it (`sendFile`), so services
 * never touch the response. `body` is the whole file, or a writer that streams it (it must not
 * end the stream: `sendFile` does).
 */
export interface FileAnswer {
  contentType: string;
  /** Further headers (Content-Disposition, Cache-Control, Content-Security-Policy…). */
  headers?: Record<string, string>;
  body: Buffer | ((out: Writable) => Promise<void>);
}

/** `Content-Disposition: attachment` with a filename that cannot break out of its quotes. */
export function attachment(filename: string): string {
  return `attachment; filename="${filename.replace(/"/g, '')}"`;
}

/** Sends a `FileAnswer` with status 200 on a response the controller took with `@Res()`. */
export async function sendFile(res: Response, file: FileAnswer): Promise<void> {
  res.status(200).setHeader('Content-Type', file.contentType);
  for (const [name, value] of Object.entries(file.headers ?? {})) res.setHeader(name, value);
  if (Buffer.isBuffer(file.body)) {
    res.end(file.body);
    return;
  }
  await file.body(res);
  res.end();
}

/**
 * Where the caller reached the service (`https://host`), for URLs the service signs for it;
 * PUBLIC_BASE_URL, when set, takes its place (UrlSigner).
 */
export const RequestOrigin = createParamDecorator((_: unknown, context: ExecutionContext): string => {
  const req = context.switchToHttp().getRequest<Request>();
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
});

/** The request's query exactly as sent (every parameter, as strings), for checking a signed URL. */
export const RawQuery = createParamDecorator(
  (_: unknown, context: ExecutionContext): Record<string, unknown> =>
    context.switchToHttp().getRequest<Request>().query as Record<string, unknown>,
);
