import 'reflect-metadata';
import { createRootLogger } from '#libs/common/logger.js';
import { DataDirLockedError } from '#libs/database/embedded-lock.js';
import { AppConfig } from '#libs/config/app-config.js';
import { ConfigurationError } from '#libs/config/environment.js';
import { createApp } from './bootstrap.js';
import { OtlpGrpcReceiver } from './modules/traces/otlp-grpc.receiver.js';
import { GracefulShutdown } from './shutdown.js';

async function main(): Promise<void> {
  const config = AppConfig.fromEnvironment();
  const logger = createRootLogger(config.env.LOG_LEVEL);
  // Listening from the start: a signal during boot stops the service once it is up (or at the deadline).
  const shutdown = new GracefulShutdown(config.env, logger, { servesHttp: true }).listen();
  const { app, drain } = await createApp(config, logger);
  await app.listen(config.env.PORT, config.env.HOST);
  shutdown.attach({ app, http: { server: app.getHttpServer(), drain } });
  if (config.env.OTLP_GRPC_PORT !== undefined) {
    const port = await app.get(OtlpGrpcReceiver).listen(config.env.OTLP_GRPC_PORT, config.env.HOST);
    logger.info({ port }, `OTLP/gRPC trace receiver on ${config.env.HOST}:${port}`);
  }
  const url = await app.getUrl();
  logger.info(
    {
      url,
      database: config.embedded ? `embedded (${config.dataDir})` : 'postgresql',
      queue: config.queueDriver,
      workers: config.env.RUN_WORKERS,
    },
    `listening on ${url} (Swagger UI at /docs)`,
  );
}

main().catch((err) => {
  if (err instanceof ConfigurationError || err instanceof DataDirLockedError) {
    process.stderr.write(`${err.message}\n`);
  } else {
    process.stderr.write(`failed to start: ${err?.stack ?? err}\n`);
  }
  process.exit(1);
});
