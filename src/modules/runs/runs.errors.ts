import { defineErrorCodes } from '#libs/common/error-codes.js';

export const RunErrors = defineErrorCodes('runs', {
  run_input_invalid: {
    status: 400,
    title: 'Run input invalid',
    description:
      'A SUT, connection, eval config or judge the body names does not exist in the workspace (`field` says which).',
  },
  metrics_required: {
    status: 400,
    title: 'Metrics required',
    description: 'A run needs an eval_config_id or a list of metrics to score with.',
  },
  metric_unavailable: {
    status: 400,
    title: 'Metric unavailable',
    description: 'A custom metric of the run is not served by an active custom op.',
  },
  run_not_active: {
    status: 409,
    title: 'Run not active',
    description: 'The run has ended (succeeded, failed or cancelled); it cannot be cancelled again.',
  },
  run_not_awaiting_upload: {
    status: 409,
    title: 'Run not awaiting upload',
    description: 'Outputs are uploaded only to an offline run in state awaiting_upload.',
  },
  upload_invalid: {
    status: 400,
    title: 'Upload invalid',
    description:
      'The uploaded outputs are not JSON (an array, {results: [...]}) or JSON Lines of {row_id, output, ...}, or name rows the run does not have (`unknown_row_ids`).',
  },
  run_still_active: { status: 409, title: 'Run still active', description: 'Rerun a run once it has ended.' },
  nothing_to_rerun: {
    status: 409,
    title: 'Nothing to rerun',
    description: 'The run has no rows of the kind asked (no errors, or no failed rows).',
  },
  gate_baseline_not_finished: {
    status: 409,
    title: 'Baseline not finished',
    description:
      'The release gate compares with a baseline run once that run has ended; `baseline_run_id` is still queued, running or awaiting an upload.',
  },
  gate_run_not_finished: {
    status: 409,
    title: 'Run not finished',
    description:
      'A gate verdict is recorded once the run has ended (succeeded, failed or cancelled); GET /runs/{run_id}/gate judges it meanwhile without recording.',
  },
  event_streams_exhausted: {
    status: 503,
    title: 'Event streams exhausted',
    description:
      'This API process already serves RUN_EVENT_STREAMS_MAX live event streams; retry after the seconds in Retry-After (or poll GET /runs/{id}/events).',
  },
  too_many_event_streams: {
    status: 429,
    title: 'Too many event streams',
    description:
      'You already hold RUN_EVENT_STREAMS_PER_USER live event streams on this API process; close one, or retry after the seconds in Retry-After.',
  },
  diff_row_not_found: {
    status: 404,
    title: 'Row not in either run',
    description: 'Neither the base nor the candidate run has this row.',
  },
  validation_metric_invalid: {
    status: 422,
    title: 'Metric cannot be validated',
    description:
      'The metric is not one of the run, is not judged (an LLM judge), or is a built-in default without a metric config version to keep the validation with: create a metric config, run with it, and validate that run.',
  },
  validation_labels_invalid: {
    status: 400,
    title: 'Human labels invalid',
    description:
      'The body names the human labels by `field` or by `labels`, exactly one of them; `reviewer_fields` goes with `field`.',
  },
  validation_no_overlap: {
    status: 422,
    title: 'No labelled row',
    description:
      "No row of the run has both a judge verdict and a human label: the field holds no value on the run's rows, or the labels name rows the run does not have.",
  },
  validation_too_few_pairs: {
    status: 422,
    title: 'Too few labelled rows',
    description:
      'Fewer than 10 rows have both a judge verdict and a human label (`pairs` says how many): too few to measure the judge.',
  },
  validation_too_many_pairs: {
    status: 422,
    title: 'Too many labelled rows',
    description: 'A validation keeps at most 10,000 labelled rows; validate a sample (a partition) of the run.',
  },
});
