import 'reflect-metadata';
import { DataDirLockedError } from '../libs/database/embedded-lock.js';
import { AppConfig } from './config/app-config.js';
import { ConfigurationError } from './config/environment.js';
import { createApp } from './bootstrap.js';

async function main(): Promise<void> {
  const config = AppConfig.fromEnvironment();
  const { app, logger } = await createApp(config);
  await app.listen(config.env.PORT, config.env.HOST);
  const url = await app.getUrl();
  logger.info(
    { url, database: config.embedded ? `embedded (${config.dataDir})` : 'postgresql', queue: config.queueDriver, workers: config.env.RUN_WORKERS },
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
