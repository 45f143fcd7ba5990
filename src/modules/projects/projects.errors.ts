import { defineErrorCodes } from '#libs/common/error-codes.js';

export const ProjectErrors = defineErrorCodes('projects', {
  template_not_found: {
    status: 404,
    title: 'Template not found',
    description:
      'GET /templates/{name} names no built-in template; `detail` and the `available` array list the names that exist.',
  },
  project_name_taken: {
    status: 409,
    title: 'Project name taken',
    description:
      'The workspace already has a project of this name (compared case-insensitively); on move, the target workspace has one.',
  },
  project_dimensions_invalid: {
    status: 400,
    title: 'Project dimensions invalid',
    description:
      'Dimension names must be unique in the list and values unique within their dimension (at most 20 dimensions); `errors` lists each problem.',
  },
  unknown_template: {
    status: 400,
    title: 'Unknown template',
    description: '`template` names no built-in template; `available` lists those GET /templates serves.',
  },
  unknown_sut: {
    status: 400,
    title: 'Unknown SUT',
    description: "An id in `sut_ids` names no SUT of the project's workspace; `invalid` lists them.",
  },
  unknown_dataset: {
    status: 400,
    title: 'Unknown dataset',
    description:
      "An id in `dataset_ids` (or a test plan's `datasets`) names no dataset of the workspace, or a version or partition is not of that dataset; `invalid` lists them.",
  },
  project_dimension_unknown: {
    status: 400,
    title: 'Unknown dimension',
    description:
      'A coverage pair, trend `group_by` or a per-dimension threshold names a dimension (or value) the project or plan does not have.',
  },
  unknown_test_plan: {
    status: 400,
    title: 'Unknown test plan',
    description:
      "`test_plan` names no test plan (id or name) of the project's workspace, or `version` is not one of its versions.",
  },
  project_test_plan_attached: {
    status: 409,
    title: 'Test plan already attached',
    description:
      'POST attaches a plan to a project without one; use PUT /projects/{project_id}/test-plan to replace the attached one.',
  },
  project_move_invalid: {
    status: 400,
    title: 'Move invalid',
    description: "The target workspace is the project's own workspace.",
  },
  test_plan_name_taken: {
    status: 409,
    title: 'Test plan name taken',
    description:
      'The workspace already has a test plan of this name (compared case-insensitively); add a version with POST /test-plans/{ref}/versions.',
  },
  test_plan_invalid: {
    status: 400,
    title: 'Test plan invalid',
    description:
      "Metric names must be unique, a release rule's `min_metrics_passing` at most the number of metrics, and a new version must change nothing it cannot (`errors` lists each problem).",
  },
  invalid_test_plan_version: {
    status: 400,
    title: 'Invalid test plan version',
    description: '`version` must be a positive integer or `latest`.',
  },
  invalid_time_range: { status: 400, title: 'Invalid time range', description: 'Trend `from` must be before `to`.' },
  builtin_recommendation_read_only: {
    status: 403,
    title: 'Built-in recommendation is read-only',
    description:
      'Built-in test-package recommendations (ids starting `builtin-`) cannot be changed or deleted; create a workspace recommendation instead.',
  },
  project_ambiguous: {
    status: 400,
    title: 'Project ambiguous',
    description:
      "Several projects with a test plan link the run's SUT or dataset; name one with `project_id` (`project_ids` lists them).",
  },
  recommendation_name_taken: {
    status: 409,
    title: 'Recommendation name taken',
    description: 'The workspace already has a test-package recommendation of this name (compared case-insensitively).',
  },
});
