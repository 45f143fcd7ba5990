import { defineErrorCodes } from '#libs/common/error-codes.js';

export const DatasetErrors = defineErrorCodes('datasets', {
  dataset_name_taken: {
    status: 409,
    title: 'Dataset name taken',
    description: 'The workspace already has a dataset with this name (compared case-insensitively).',
  },
  malformed_file: {
    status: 400,
    title: 'Malformed file',
    description:
      'The uploaded file cannot be read as its format; `where` names the line or row and `reason` says what is wrong. Nothing was created.',
  },
  unsupported_format: {
    status: 400,
    title: 'Unsupported format',
    description:
      'The file format is neither given nor recognisable from the file name; send `format` (csv, json, jsonl or parquet).',
  },
  file_required: { status: 400, title: 'File required', description: 'The multipart body has no `file` part.' },
  invalid_row: {
    status: 400,
    title: 'Invalid row',
    description:
      'A row breaks a rule: not an object, too many columns, a column name too long, a `_row_id` that is not a UUID or repeats, nesting deeper than 32 levels, text with NUL or an unpaired surrogate, or a row over 1 MiB.',
  },
  too_many_rows: {
    status: 413,
    title: 'Too many rows',
    description: 'The upload has more rows than UPLOAD_MAX_ROWS allows.',
  },
  empty_dataset: { status: 400, title: 'Empty dataset', description: 'The file holds no rows.' },
  row_not_found: {
    status: 404,
    title: 'Row not found',
    description: "A row id names no row of the dataset's newest version; `row_ids` lists them.",
  },
  row_exists: {
    status: 409,
    title: 'Row exists',
    description: 'An inserted row carries a `_row_id` the dataset already has.',
  },
  row_edit_conflict: {
    status: 409,
    title: 'Conflicting staged edit',
    description:
      'Another user has a staged edit of the same row; it must be committed or discarded first. `conflicts` names the rows and who staged them.',
  },
  nothing_to_commit: {
    status: 409,
    title: 'Nothing to commit',
    description: 'There are no staged row edits to commit.',
  },
  stale_edits: {
    status: 409,
    title: 'Stale staged edits',
    description:
      'Staged edits refer to rows a newer version no longer has; `row_ids` lists them. Discard them and stage again.',
  },
  unknown_row_source: {
    status: 400,
    title: 'Unknown dataset, version or partition',
    description:
      'The dataset, version or partition a body names (e.g. to start a run) does not exist in the workspace, or the dataset has no version yet.',
  },
  version_not_found: { status: 404, title: 'Version not found', description: 'The dataset has no such version.' },
  dataset_busy: {
    status: 409,
    title: 'Dataset busy',
    description:
      "A trace landing is writing the dataset's next version; a new version can be made once it is done. Retry in a moment.",
  },
  version_state_conflict: {
    status: 409,
    title: 'Version state conflict',
    description: 'The version is already in the state the operation would put it in.',
  },
  unknown_column: {
    status: 400,
    title: 'Unknown column',
    description:
      'A column named in a mapping, projection or rule is not a column of the version; `available` lists them.',
  },
  unknown_dimension: {
    status: 400,
    title: 'Unknown dimension',
    description:
      'A dimension named in a query, grouping or partition is not defined on the dataset; `available` lists them.',
  },
  partition_name_taken: {
    status: 409,
    title: 'Partition name taken',
    description: 'The version already has a partition with this name (compared case-insensitively).',
  },
  partition_not_found: { status: 404, title: 'Partition not found', description: 'The version has no such partition.' },
  level_not_supported: {
    status: 400,
    title: 'Level not supported',
    description: 'Trace and span levels need a trace dataset; test-case datasets partition at session level.',
  },
  no_quality_run: {
    status: 404,
    title: 'No quality run',
    description: 'No quality checks have run on the version yet.',
  },
  operation_run_not_found: {
    status: 404,
    title: 'Run not found',
    description: 'The version has no such data-operation run.',
  },
  invalid_filter: {
    status: 400,
    title: 'Invalid filter',
    description:
      'The filter, sort or projection is not valid in the query language (docs/query-language.md); `pointer` names the offending member.',
  },
  invalid_cursor: {
    status: 400,
    title: 'Invalid cursor',
    description: 'The cursor was not issued for this query, or is corrupt.',
  },
});
