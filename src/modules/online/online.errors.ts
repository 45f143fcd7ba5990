import { defineErrorCodes } from '#libs/common/error-codes.js';

export const OnlineErrors = defineErrorCodes('online', {
  online_evaluator_invalid: {
    status: 400,
    title: 'Online evaluator invalid',
    description:
      'An evaluator does not hold together: no metric, a metric that is neither a metric config nor a built-in, a judged metric without a judge, a mapping naming an unknown span field, a budget or quiet period out of range; `field` names the member.',
  },
  online_evaluator_name_taken: {
    status: 409,
    title: 'Evaluator name taken',
    description: 'The workspace already has an online evaluator of that name.',
  },
  online_route_invalid: {
    status: 400,
    title: 'Route invalid',
    description:
      'The route of low scores names a review queue that is not a traces or sessions queue of the evaluator dataset, or a dataset that is not a test-case dataset of the workspace, or a metric the evaluator does not score.',
  },
  backfill_range_invalid: {
    status: 400,
    title: 'Backfill range invalid',
    description: '`from` must be before `to`, and the range at most 366 days.',
  },
});
