import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import multer from 'multer';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { from, Observable, switchMap } from 'rxjs';
import { AppConfig } from '#libs/config/app-config.js';
import { DomainError, ValidationFailedError } from './domain-error.js';
import { CommonErrors } from './error-codes.js';

/**
 * Receives one multipart file part named `file` onto disk under DATA_DIR/uploads (never into
 * memory), with the other parts as text fields in `req.body`. The size limit is
 * UPLOAD_MAX_BYTES (413 beyond it); the handler removes the file when it is done with it.
 */
@Injectable()
export class FileUploadInterceptor implements NestInterceptor {
  private readonly handler: ReturnType<ReturnType<typeof multer>['single']>;

  constructor(config: AppConfig) {
    const dir = join(config.dataDir, 'uploads');
    mkdirSync(dir, { recursive: true });
    this.handler = multer({
      dest: dir,
      limits: { fileSize: config.env.UPLOAD_MAX_BYTES, files: 1, fields: 32, fieldSize: 64 * 1024, parts: 40 },
    }).single('file');
    this.maxBytes = config.env.UPLOAD_MAX_BYTES;
  }

  private readonly maxBytes: number;

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    const received = new Promise<void>((resolve, reject) => {
      this.handler(req, res, (err: unknown) => (err ? reject(this.problem(err)) : resolve()));
    });
    return from(received).pipe(switchMap(() => next.handle()));
  }

  private problem(err: unknown): unknown {
    if (err instanceof multer.MulterError) {
      if (err.code === 'LIMIT_FILE_SIZE')
        return new DomainError(
          CommonErrors.payload_too_large,
          `The file exceeds UPLOAD_MAX_BYTES (${this.maxBytes} bytes)`,
          { limit_bytes: this.maxBytes },
        );
      if (err.code === 'LIMIT_UNEXPECTED_FILE')
        return new ValidationFailedError(
          `Unexpected file part "${err.field}"; send one file, in the part named "file"`,
          [{ field: err.field ?? 'file', message: 'unexpected file part' }],
        );
      return new ValidationFailedError(`The multipart body is not acceptable: ${err.message}`, [
        { field: err.field ?? 'body', message: err.message },
      ]);
    }
    const message = (err as Error).message ?? String(err);
    return new ValidationFailedError(`The multipart body cannot be read: ${message}`, [{ field: 'body', message }]);
  }
}
