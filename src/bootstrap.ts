import type { DynamicModule, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { Logger } from 'pino';
import { HttpDrain } from '#libs/common/http-drain.js';
import { answerClientErrors, bodyParser, requestMiddleware } from '#libs/common/http-pipeline.js';
import { createRootLogger, JsonLogger } from '#libs/common/logger.js';
import { ProblemFilter } from '#libs/common/problem.filter.js';
import { RouteTable } from '#libs/common/route-table.js';
import { createValidationPipe } from '#libs/common/validation.js';
import { AppModule } from './app.module.js';
import type { AppConfig } from '#libs/config/app-config.js';
import { trustProxySetting } from '#libs/config/trusted-proxies.js';
import { OTLP_LOGS_PATH, OTLP_TRACES_PATH, otlpBodyParser } from './modules/traces/otlp-http.js';
import { buildOpenApiDocument, serveOpenApi } from './openapi.js';

export interface CreatedApp {
  app: NestExpressApplication;
  logger: Logger;
  /** Requests in flight, and the drain a shutdown runs (src/shutdown.ts). */
  drain: HttpDrain;
}

/** Builds the HTTP application exactly as production runs it; tests call this too. */
export async function createApp(
  config: AppConfig,
  logger: Logger = createRootLogger(config.env.LOG_LEVEL),
  options: { modules?: Array<Type | DynamicModule> } = {},
): Promise<CreatedApp> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, options.modules, logger), {
    bodyParser: false,
    logger: new JsonLogger(logger),
    abortOnError: false,
  });
  app.disable('x-powered-by');
  // X-Forwarded-For is believed only from proxies the operator names; otherwise req.ip is the peer.
  app.set('trust proxy', trustProxySetting(config.env.TRUSTED_PROXIES));
  const drain = new HttpDrain();
  app.use(requestMiddleware(logger, drain));
  // OTLP/HTTP exports are protobuf or JSON of their own size limit, read before the API's body parsers.
  app.use([OTLP_TRACES_PATH, OTLP_LOGS_PATH], otlpBodyParser(config.env.OTLP_MAX_BYTES));
  app.use(bodyParser(config.env.BODY_LIMIT));
  app.useGlobalPipes(createValidationPipe());
  // The OpenAPI document is built the first time something needs it (GET /docs, /openapi.json or
  // /openapi.yaml, a 404 or 405 that consults the route table), then kept: it takes most of a
  // second, which the start (the first answer of GET /live) does without.
  let document: OpenAPIObject | undefined;
  const openApiDocument = (): OpenAPIObject => (document ??= buildOpenApiDocument(app));
  app.useGlobalFilters(new ProblemFilter(logger, RouteTable.deferred(openApiDocument)));
  serveOpenApi(app, openApiDocument);
  // No enableShutdownHooks(): signals belong to GracefulShutdown (src/main.ts), which bounds the close.
  answerClientErrors(app.getHttpServer());
  await app.init();
  return { app, logger, drain };
}
