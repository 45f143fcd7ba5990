import { defineErrorCodes } from '#libs/common/error-codes.js';

export const ReportErrors = defineErrorCodes('reports', {
  report_section_not_found: {
    status: 404,
    title: 'Report section not found',
    description:
      'The report has no section of this key (it was never part of the report or was deleted); `available` lists the keys it has.',
  },
  report_section_key_unknown: {
    status: 404,
    title: 'Unknown report section',
    description:
      'The section key names no built-in report section; `available` lists summary, metrics_overview, results_by_dimension, regressions, failure_examples and recommendations.',
  },
  report_content_invalid: {
    status: 400,
    title: 'Report content invalid',
    description:
      'PUT content names a section the report does not have, or the same section twice (`errors` lists each problem).',
  },
  report_reference_invalid: {
    status: 400,
    title: 'Report reference invalid',
    description:
      'A config_id, judge_id or baseline_run_id named in the body does not exist in the workspace (`field` says which).',
  },
  report_config_invalid: {
    status: 400,
    title: 'Report config invalid',
    description: 'A report config names the same section twice (`errors` lists each problem).',
  },
  report_config_name_taken: {
    status: 409,
    title: 'Report config name taken',
    description: 'The workspace already has a report config of this name (compared case-insensitively).',
  },
  report_settings_invalid: {
    status: 400,
    title: 'Report settings invalid',
    description:
      'default_config_id or judge_id names no record of the workspace, or default_format is not one of formats (`field` says which).',
  },
  report_format_not_enabled: {
    status: 400,
    title: 'Report format not enabled',
    description:
      "The format asked for is not among the workspace report settings' formats; `available` lists those that are.",
  },
});
