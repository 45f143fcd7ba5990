/** A canonical field a metric reads from the dataset (the SUT's output comes from the run). */
export type DatasetField = 'input' | 'expected_output' | 'context';

export interface BuiltinMetric {
  name: string;
  kind: 'deterministic' | 'judged';
  description: string;
  /** Canonical dataset fields the metric needs mapped onto columns. */
  requires: DatasetField[];
}

/**
 * The built-in metrics and what each needs from a dataset. Runs compute them; datasets use this
 * list to say which metrics a version (or partition) can be scored with given its mapping.
 */
export const BUILTIN_METRICS: readonly BuiltinMetric[] = [
  {
    name: 'exact_match',
    kind: 'deterministic',
    description: 'Output equals the expected output (after trimming)',
    requires: ['expected_output'],
  },
  {
    name: 'contains',
    kind: 'deterministic',
    description: 'Output contains the expected output',
    requires: ['expected_output'],
  },
  { name: 'regex', kind: 'deterministic', description: 'Output matches a configured regular expression', requires: [] },
  { name: 'json_valid', kind: 'deterministic', description: 'Output parses as JSON', requires: [] },
  {
    name: 'json_schema',
    kind: 'deterministic',
    description: 'Output is JSON valid against a configured JSON Schema',
    requires: [],
  },
  {
    name: 'levenshtein',
    kind: 'deterministic',
    description: 'Normalised edit similarity between output and expected output',
    requires: ['expected_output'],
  },
  {
    name: 'token_f1',
    kind: 'deterministic',
    description: 'Token-overlap F1 between output and expected output',
    requires: ['expected_output'],
  },
  {
    name: 'bleu',
    kind: 'deterministic',
    description: 'BLEU-4 of the output against the expected output',
    requires: ['expected_output'],
  },
  {
    name: 'rouge_l',
    kind: 'deterministic',
    description: 'ROUGE-L F-measure of the output against the expected output',
    requires: ['expected_output'],
  },
  {
    name: 'embedding_similarity',
    kind: 'deterministic',
    description: 'Cosine similarity of output and expected output embeddings',
    requires: ['expected_output'],
  },
  { name: 'latency', kind: 'deterministic', description: 'Time the system under test took to answer', requires: [] },
  { name: 'cost', kind: 'deterministic', description: 'Cost of the call from token usage and prices', requires: [] },
  { name: 'length', kind: 'deterministic', description: 'Length of the output in characters and words', requires: [] },
  // Trajectory metrics read the item's trajectory, and the expected calls from a column a parameter names.
  { name: 'tool_called', kind: 'deterministic', description: 'A named tool was (not) called', requires: [] },
  {
    name: 'tool_args_match',
    kind: 'deterministic',
    description: "A tool's calls have the expected arguments (exact, JSON subset or JSON Schema)",
    requires: [],
  },
  {
    name: 'trajectory_match',
    kind: 'deterministic',
    description: 'The sequence of tool calls matches the expected one (strict, unordered, subset, superset)',
    requires: [],
  },
  {
    name: 'tool_call_f1',
    kind: 'deterministic',
    description: 'Precision, recall and F1 of the tool calls against the expected calls',
    requires: [],
  },
  { name: 'step_budget', kind: 'deterministic', description: 'Tool calls or steps within a budget', requires: [] },
  {
    name: 'no_repeated_calls',
    kind: 'deterministic',
    description: 'No identical tool call (same arguments) repeated',
    requires: [],
  },
  {
    name: 'correctness',
    kind: 'judged',
    description: 'A judge grades the output against the expected output',
    requires: ['input', 'expected_output'],
  },
  {
    name: 'answer_relevance',
    kind: 'judged',
    description: 'A judge grades how well the output answers the input',
    requires: ['input'],
  },
  {
    name: 'faithfulness',
    kind: 'judged',
    description: 'A judge checks the output is supported by the context',
    requires: ['context'],
  },
  {
    name: 'context_relevance',
    kind: 'judged',
    description: 'A judge grades how relevant the context is to the input',
    requires: ['input', 'context'],
  },
  {
    name: 'helpfulness',
    kind: 'judged',
    description: 'A judge grades the output for helpfulness against a rubric',
    requires: ['input'],
  },
  {
    name: 'trajectory_quality',
    kind: 'judged',
    description: "A judge grades the agent's trajectory: goal reached, efficient, safe",
    requires: ['input'],
  },
];

export interface MetricAvailability {
  name: string;
  kind: BuiltinMetric['kind'];
  description: string;
  available: boolean;
  requires: DatasetField[];
  /** Required fields the mapping does not provide. */
  missing: DatasetField[];
}

/** Which built-in metrics a dataset with this mapping can be scored with, and what the others lack. */
export function metricAvailability(mapped: Partial<Record<DatasetField, string>>): MetricAvailability[] {
  return BUILTIN_METRICS.map((m) => {
    const missing = m.requires.filter((field) => !mapped[field]);
    return {
      name: m.name,
      kind: m.kind,
      description: m.description,
      available: missing.length === 0,
      requires: m.requires,
      missing,
    };
  });
}
