import { Module } from '@nestjs/common';
import { AuditLogController } from './audit-log.controller.js';
import { AuditLogRepository } from './audit-log.repository.js';
import { AuditLogService } from './audit-log.service.js';
import { AuditRetentionService } from './audit-retention.service.js';

/** The audit log's reads, exports and retention over the shared audit trail (libs/audit). */
@Module({
  controllers: [AuditLogController],
  providers: [AuditLogService, AuditRetentionService, AuditLogRepository],
})
export class AuditLogModule {}
