import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { map, type Observable } from 'rxjs';

/** Sets one response header from the record a handler returns (`Location`, `ETag`…). */
export class ResponseHeaderInterceptor<T> implements NestInterceptor<T, T> {
  constructor(
    private readonly header: string,
    private readonly valueOf: (body: T) => string,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler<T>): Observable<T> {
    return next.handle().pipe(
      map((body) => {
        context.switchToHttp().getResponse<Response>().setHeader(this.header, this.valueOf(body));
        return body;
      }),
    );
  }
}
