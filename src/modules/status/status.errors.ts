import { defineErrorCodes } from '../../../libs/common/error-codes.js';

export const StatusErrors = defineErrorCodes('status', {
  template_not_found: {
    status: 404,
    title: 'Template not found',
    description: 'GET /templates/{name} names no built-in template; `detail` and the `available` array list the names that exist.',
  },
});
