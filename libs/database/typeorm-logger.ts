import type { Logger as Pino } from 'pino';
import type { Logger, LogLevel, LogMessage, QueryRunner } from 'typeorm';

/** TypeORM's messages as JSON lines through the service logger (request id included). */
export class TypeOrmJsonLogger implements Logger {
  constructor(private readonly logger: Pino) {}

  logQuery(): void {}

  logQueryError(error: string | Error, query: string, parameters?: unknown[], _runner?: QueryRunner): void {
    // Parameters may hold secrets or personal data: log how many, not what.
    this.logger.warn(
      { context: 'database', query: query.slice(0, 2000), parameter_count: parameters?.length ?? 0, err: error },
      'query failed',
    );
  }

  logQuerySlow(time: number, query: string): void {
    this.logger.warn({ context: 'database', duration_ms: time, query: query.slice(0, 2000) }, 'slow query');
  }

  logSchemaBuild(message: string): void {
    this.logger.debug({ context: 'database' }, message);
  }

  logMigration(message: string): void {
    this.logger.info({ context: 'migrations' }, message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    this.logger[level === 'warn' ? 'warn' : 'info']({ context: 'database' }, String(message));
  }

  logMessages?(_: string | LogMessage | (string | LogMessage)[], __?: LogLevel): void {}
}
