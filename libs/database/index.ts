export * from './data-source.factory.js';
export * from './database.module.js';
export * from './database-shutdown.js';
export * from './embedded-lock.js';
export * from './entity-columns.js';
export * from './notifications.js';
export * from './unit-of-work.js';
export * from './record-queries.js';
