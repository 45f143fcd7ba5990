import { defineErrorCodes } from '#libs/common/error-codes.js';

export const SdgErrors = defineErrorCodes('sdg', {
  sdg_adapter_invalid: {
    status: 400,
    title: 'SDG adapter invalid',
    description:
      'A template adapter needs `columns`, an llm adapter `prompt`, `output_columns` and `judge_id`; templates must name only {{seed.<column>}}, {{dim.<name>}} of the adapter and {{index}}; dimension values are non-empty lists of strings (`errors` lists each problem).',
  },
  sdg_adapter_name_taken: {
    status: 409,
    title: 'SDG adapter name taken',
    description: 'The workspace already has an SDG adapter of this name (compared case-insensitively).',
  },
  sdg_input_invalid: {
    status: 400,
    title: 'SDG run input invalid',
    description:
      'The target dataset, seed dataset or version named in the body does not exist in the workspace (`field` says which).',
  },
  sdg_too_many_rows: {
    status: 400,
    title: 'Too many rows',
    description:
      'Seed rows times dimension combinations (times count for llm adapters) exceeds max_rows; raise max_rows (up to 10000) or narrow the seed.',
  },
});
