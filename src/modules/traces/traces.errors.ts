import { defineErrorCodes } from '#libs/common/error-codes.js';

export const TraceErrors = defineErrorCodes('traces', {
  trace_connection_invalid: {
    status: 400,
    title: 'Trace connection invalid',
    description:
      'A langfuse connection needs `secret_id` (secret key) and `public_key_secret_id`; secrets and the dataset must belong to the workspace (`field` names the member).',
  },
  trace_connection_name_taken: {
    status: 409,
    title: 'Trace connection name taken',
    description: 'The workspace already has a trace connection of this name (compared case-insensitively).',
  },
  trace_source_invalid: {
    status: 400,
    title: 'Trace source invalid',
    description:
      'POST /traces/land names exactly one of `upload_id` and `connection_id`, of the workspace (`field` names the member).',
  },
  trace_dataset_invalid: {
    status: 400,
    title: 'Not a trace dataset',
    description:
      'Landings write to datasets of kind `traces`: `dataset_id` names a test-case dataset or none of the workspace, or `dataset_name` is taken by a test-case dataset.',
  },
  trace_sample_empty: {
    status: 400,
    title: 'No spans in the sample',
    description:
      'Detection read no span from the records or the upload; `dropped_records` in the detail says why each record was refused.',
  },
  trace_upload_empty: {
    status: 400,
    title: 'Empty trace upload',
    description: 'The multipart body has no `file` part, or the file is empty.',
  },
  not_a_trace_version: {
    status: 400,
    title: 'Not a trace version',
    description:
      'Topology, trace enrichment, trace tags, ground truth and trace promotion apply to versions of trace datasets.',
  },
  unknown_traces: {
    status: 400,
    title: 'Unknown traces',
    description: 'Trace ids that are not in the version (`trace_ids` lists up to 20 of them).',
  },
  ground_truth_not_found: {
    status: 404,
    title: 'No ground truth',
    description: 'The trace version has no ground truth yet (or not the version number asked for): POST one first.',
  },
  prices_invalid: {
    status: 400,
    title: 'Price table invalid',
    description: 'Each model maps to `{ input_per_1m, output_per_1m }`, non-negative USD per million tokens.',
  },
  trace_tags_query_invalid: {
    status: 400,
    title: 'Trace tags query invalid',
    description:
      'DELETE /trace-tags needs `trace_id`, `tag` or both: it never clears every tag of a version by accident.',
  },
  otlp_body_undecodable: {
    status: 400,
    title: 'OTLP body undecodable',
    description:
      'POST /v1/traces could not decode the body as an ExportTraceServiceRequest in the encoding its Content-Type names (binary protobuf for application/x-protobuf, the OTLP JSON mapping for application/json). Nothing of it was kept; spans it could decode but not use are reported in partial_success instead.',
  },
  otlp_dataset_header_invalid: {
    status: 400,
    title: 'OTLP dataset header invalid',
    description: 'The x-ews-dataset header names the trace dataset: 1 to 200 characters, no control characters.',
  },
  otlp_backpressure: {
    status: 429,
    title: 'Spans still landing',
    description:
      'The dataset has more acknowledged spans waiting to land than OTLP_MAX_PENDING_SPANS: the export was not accepted; retry after Retry-After seconds (OTLP exporters do).',
  },
  trace_feedback_key_conflict: {
    status: 409,
    title: 'Feedback key reused',
    description:
      'The workspace already holds feedback under this `client_key` with other content (trace, span, name, value, comment, user_ref or metadata). A retry sends exactly what the first post sent; new feedback takes a new key.',
  },
  trace_score_window_invalid: {
    status: 400,
    title: 'Score window invalid',
    description:
      'GET /traces/scores:aggregate needs `from` before `to`, at most 1000 hour or day buckets between them, and at most 10,000 (bucket, group) rows in its answer: a coarser bucket or a shorter window answers.',
  },
  trace_span_not_found: {
    status: 404,
    title: 'Trace or span not in the version',
    description:
      "The span tree reads answer traces the version holds: `trace_id` names none of its traces, or `parent_span_id` none of that trace's spans.",
  },
  span_cursor_invalid: {
    status: 400,
    title: 'Span cursor invalid',
    description:
      'A span tree page continues from the `next_cursor` of the page before it in the same read (same version, trace, `parent_span_id` or `max_depth`); this one was not issued for it.',
  },
});
