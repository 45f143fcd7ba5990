import { defineErrorCodes } from '#libs/common/error-codes.js';

export const CatalogueErrors = defineErrorCodes('catalogues', {
  embedding_config_name_taken: {
    status: 409,
    title: 'Embedding config name taken',
    description:
      "The workspace already has an embedding config with this name (compared case-insensitively), or the name is `local`, the built-in embedder's.",
  },
  embedding_config_not_found: {
    status: 404,
    title: 'Embedding config not found',
    description: 'No embedding config of the workspace has this id or name; `available` lists the names.',
  },
  notification_config_name_taken: {
    status: 409,
    title: 'Webhook name taken',
    description: 'The workspace already has a notification config with this name (compared case-insensitively).',
  },
  judge_name_taken: {
    status: 409,
    title: 'Judge name taken',
    description: 'The workspace already has a judge with this name (compared case-insensitively).',
  },
  judge_in_use: {
    status: 409,
    title: 'Judge in use',
    description: 'Metric config versions or eval configs name the judge (`used_by`); point them elsewhere first.',
  },
  unknown_judge: {
    status: 400,
    title: 'Unknown judge',
    description: 'A judge_id in the body names no judge of the workspace.',
  },
  rubric_invalid: {
    status: 400,
    title: 'Rubric invalid',
    description:
      'The rubric template does not parse: an unterminated {{ or an unknown placeholder (`errors` lists each).',
  },
  scale_invalid: {
    status: 400,
    title: 'Scale invalid',
    description: 'A numeric scale needs min below max; labels must be distinct and scores must name them.',
  },
  unknown_metric: {
    status: 400,
    title: 'Unknown metric',
    description:
      'The metric is not one of the kind: a built-in deterministic metric, a judged metric (llm_judge or a built-in rubric), or a custom metric op the workspace registered.',
  },
  metric_params_invalid: {
    status: 400,
    title: 'Metric parameters invalid',
    description: "The parameters break the metric's JSON Schema (GET /ops/{metric}/schema); `errors` lists each field.",
  },
  invalid_config_version: {
    status: 400,
    title: 'Invalid config version',
    description: 'config_version must be a positive integer or `latest`.',
  },
  metric_config_name_taken: {
    status: 409,
    title: 'Metric config name taken',
    description: 'The workspace already has a metric config of this name; add a version to it instead.',
  },
  metric_config_frozen: {
    status: 409,
    title: 'Metric config version frozen',
    description: 'A run used this version, so it can no longer be changed or deleted; create a new version.',
  },
  metric_config_in_use: {
    status: 409,
    title: 'Metric config version pinned',
    description: 'A workspace default or an eval config pins this version (`used_by`).',
  },
  metric_default_invalid: {
    status: 400,
    title: 'Metric default invalid',
    description:
      'A pin names a metric twice, a config (or version) the workspace does not have, or a config that computes another metric.',
  },
  judge_required: {
    status: 400,
    title: 'Judge required',
    description:
      "A judged metric of the eval config has no judge: set default_judge_id or the metric config's judged.judge_id.",
  },
  eval_config_name_taken: {
    status: 409,
    title: 'Eval config name taken',
    description: 'The workspace already has an eval config with this name (compared case-insensitively).',
  },
  eval_config_invalid: {
    status: 400,
    title: 'Eval config invalid',
    description:
      'A metric is named twice, names no metric config or built-in metric, or pins a version that does not exist (`field` says which).',
  },
  judge_validation_not_judged: {
    status: 422,
    title: 'Not a judged metric',
    description:
      'Only a judged metric config version (an LLM judge) is validated against human labels; this version is deterministic or custom.',
  },
  judge_validations_no_shared_items: {
    status: 422,
    title: 'No shared items',
    description:
      'The two validations share no item with a verdict of both judges and the same human label: compare validations made on the same rows (say, two runs of one dataset version).',
  },
});
