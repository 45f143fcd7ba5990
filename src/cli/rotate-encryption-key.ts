import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { createRootLogger, JsonLogger } from '#libs/common/logger.js';
import { AppModule } from '../app.module.js';
import { AppConfig } from '#libs/config/app-config.js';
import { SecretsService } from '../modules/secrets/secrets.service.js';

/**
 * `npm run rotate-keys`: re-seals every workspace secret under the current ENCRYPTION_KEY.
 * Run it with the new key as ENCRYPTION_KEY and the old one(s) in ENCRYPTION_KEY_PREVIOUS;
 * when it reports no failures, ENCRYPTION_KEY_PREVIOUS can be dropped. Prints a JSON report;
 * exits 1 when a secret could not be opened.
 */
async function main(): Promise<void> {
  const config = AppConfig.fromEnvironment({ ...process.env, RUN_WORKERS: 'false' });
  const logger = createRootLogger(config.env.LOG_LEVEL);
  const context = await NestFactory.createApplicationContext(AppModule.forRoot(config, [], logger), {
    logger: new JsonLogger(logger),
  });
  try {
    const report = await context.get(SecretsService).rotateEncryptionKey();
    process.stdout.write(`${JSON.stringify(report)}\n`);
    process.exitCode = report.failed.length ? 1 : 0;
  } finally {
    await context.close();
  }
}

main().catch((err) => {
  process.stderr.write(`key rotation failed: ${err?.message ?? err}\n`);
  process.exit(1);
});
