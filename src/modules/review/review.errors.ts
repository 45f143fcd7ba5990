import { defineErrorCodes } from '#libs/common/error-codes.js';

export const ReviewErrors = defineErrorCodes('review', {
  review_rubric_invalid: {
    status: 400,
    title: 'Rubric invalid',
    description:
      'A rubric field does not hold together (a categorical field without 2 distinct options, a numeric field without min < max, a name used twice, no required field); `errors` names each.',
  },
  reviewer_not_member: {
    status: 400,
    title: 'Reviewer is not a member',
    description:
      'A reviewer or adjudicator named is not a member of the workspace with role member or above; `user_ids` lists them.',
  },
  unknown_review_source: {
    status: 400,
    title: 'Unknown review source',
    description:
      'The queue source names no run or dataset version of the workspace, or a version of the wrong kind (`traces` and `sessions` need a trace dataset).',
  },
  item_selection_invalid: {
    status: 400,
    title: 'Item selection invalid',
    description:
      'Give exactly one of `filter`, `ids`, `run_failures` or `feedback`; `run_failures` needs a run source, `filter` a dataset or trace source, `feedback` a trace or session source; `sample` goes with `filter` or `feedback`.',
  },
  label_invalid: {
    status: 422,
    title: 'Label invalid',
    description:
      'The label does not fit its rubric version: a required field missing, a value of the wrong type, outside the options or the scale, or a field the rubric does not have; `errors` names each.',
  },
  not_a_reviewer: {
    status: 403,
    title: 'Not a reviewer of this queue',
    description: 'The queue names its reviewers and the caller is not one of them.',
  },
  not_an_adjudicator: {
    status: 403,
    title: 'Not an adjudicator of this queue',
    description: "Only admins and the queue's named adjudicators adjudicate and see every reviewer's labels.",
  },
  no_lease: {
    status: 409,
    title: 'No lease on this item',
    description:
      'The caller holds no live lease on the item (never taken, released, or expired and taken by someone else): ask for the next item.',
  },
  already_labelled: {
    status: 409,
    title: 'Already labelled',
    description: 'The caller has already labelled or skipped this item; edit the label instead.',
  },
  no_label: {
    status: 404,
    title: 'No label of yours',
    description: 'The caller has not labelled this item.',
  },
  not_in_disagreement: {
    status: 409,
    title: 'Item not in disagreement',
    description: 'Only an item whose labels disagree can be adjudicated (it is still pending, or already final).',
  },
  queue_closed: {
    status: 409,
    title: 'Queue closed',
    description: 'The queue is closed: it takes no items, leases or labels until it is opened again.',
  },
  nothing_to_export: {
    status: 409,
    title: 'Nothing to export',
    description: 'No item of the queue has a final label yet.',
  },
  export_target_invalid: {
    status: 409,
    title: 'Export target invalid',
    description:
      'The dataset named for the export does not exist (ask `create_dataset: true`) or is a trace dataset, which takes no test cases; a ground-truth export needs a traces queue, and no `dataset_name` beside it.',
  },
  judge_validation_source_invalid: {
    status: 422,
    title: 'No run to validate the judge on',
    description:
      "A judge is validated on a run's rows: a trace or session queue has none, a dataset-version queue names its run in `run_id`, and the run must be over the queue's dataset version.",
  },
  rubric_field_not_rated: {
    status: 422,
    title: 'Rubric field cannot validate a judge',
    description:
      "The rubric field named is not in the queue's rubric, or is a free-text field: a judge is validated against a pass/fail, categorical or numeric field.",
  },
  no_final_labels: {
    status: 409,
    title: 'No final labels',
    description: 'No item of the queue has a final label of the rubric field named yet.',
  },
  export_field_invalid: {
    status: 422,
    title: 'Export field invalid',
    description:
      "The rubric field named for the ground truth's expected output is not a free-text field of the queue's rubric.",
  },
});

/** A judge run's request refused before it is queued (src/modules/review/judging). */
export const ReviewJudgingErrors = defineErrorCodes('review', {
  judge_run_metric_invalid: {
    status: 422,
    title: 'Metric config cannot judge the queue',
    description:
      'The metric config version named is not a judged metric, or names no judge connection: a judge run needs a judged metric config version with its judge.',
  },
  judge_run_field_invalid: {
    status: 422,
    title: 'Rubric field cannot validate a judge',
    description:
      "The rubric field is not in the queue's current rubric or is free text, or `positive` does not fit it: a categorical field needs `positive` (some of its options), a pass/fail field takes none.",
  },
  judge_run_finished: {
    status: 409,
    title: 'Judge run already ended',
    description: 'The judge run has already succeeded, failed or been cancelled; there is nothing to cancel.',
  },
});
