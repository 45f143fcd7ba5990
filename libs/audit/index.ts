export * from './audit-event.entity.js';
export * from './audit.module.js';
export * from './audit.service.js';
