export * from './data-source.factory.js';
export * from './database.module.js';
export * from './embedded-lock.js';
export * from './entity-columns.js';
export * from './transaction-runner.js';
