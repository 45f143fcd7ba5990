import { defineErrorCodes } from '#libs/common/error-codes.js';

/** Error codes of alert rules on online scores (the online family's). */
export const OnlineAlertErrors = defineErrorCodes('online', {
  alert_rule_invalid: {
    status: 400,
    title: 'Alert rule invalid',
    description:
      'An alert rule does not hold together: `alpha` not below `alpha_resolve`, a reference window that is not `trailing` with `seconds` or `fixed` with `from` before `to` (at most 366 days), a `metric` no version of the evaluator scores, or members of the other reference kind; `field` names the member.',
  },
  alert_rule_name_taken: {
    status: 409,
    title: 'Alert rule name taken',
    description: 'The evaluator already has an alert rule of that name.',
  },
});
