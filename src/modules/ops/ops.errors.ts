import { defineErrorCodes } from '#libs/common/error-codes.js';

export const OpsErrors = defineErrorCodes('ops', {
  op_schema_invalid: {
    status: 400,
    title: 'Op schema invalid',
    description: 'params_schema does not compile as a JSON Schema (draft-07) or does not describe an object.',
  },
  unknown_custom_op: {
    status: 400,
    title: 'Unknown custom op',
    description: 'custom_op names no custom op of the workspace.',
  },
  op_name_reserved: {
    status: 409,
    title: 'Op name reserved',
    description: "The name is a built-in op's (GET /ops lists them).",
  },
  op_kind_change: {
    status: 409,
    title: 'Op kind cannot change',
    description: 'A registered name keeps its kind (metric, check, enrichment, transform) across versions.',
  },
  custom_op_name_taken: {
    status: 409,
    title: 'Custom op name taken',
    description: 'The workspace already has a custom op with this name; redeploy it with PATCH instead.',
  },
  custom_op_in_use: {
    status: 409,
    title: 'Custom op in use',
    description: 'Metric config versions score with an op this custom op serves (`used_by`).',
  },
  custom_op_not_stopped: {
    status: 409,
    title: 'Custom op not stopped',
    description: 'Stop the custom op (PATCH .../stop) before deleting it, so no run is using it when it goes.',
  },
});
