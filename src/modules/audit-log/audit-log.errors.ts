import { defineErrorCodes } from '#libs/common/error-codes.js';

export const AuditLogErrors = defineErrorCodes('audit-log', {
  audit_cursor_invalid: {
    status: 400,
    title: 'Audit cursor invalid',
    description:
      'A page of the audit log continues from the `next_cursor` of the page before it in the same log; this one names no event there (or its event has expired).',
  },
});
