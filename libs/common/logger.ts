import type { LoggerService } from '@nestjs/common';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { requestContext } from './request-context.js';

/** Structured JSON logs on stdout (or `destination`); every line written inside a request carries its request_id. */
export function createRootLogger(level: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'ews' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin() {
      const ctx = requestContext.getStore();
      return ctx ? { request_id: ctx.requestId, user_id: ctx.userId } : {};
    },
    redact: {
      paths: ['*.password', '*.token', '*.value', '*.authorization', 'req.headers.authorization'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Adapts pino to Nest's LoggerService so framework messages are JSON lines too. */
export class JsonLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string) {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
  fatal(message: unknown, context?: string) {
    this.logger.fatal({ context }, String(message));
  }
}
