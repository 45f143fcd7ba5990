import { PROJECT_TEMPLATES, type ProjectTemplate } from './templates/index.js';
import type { TestPackageRecommendation } from './dto/recommendation.dto.js';

export const BUILTIN_PREFIX = 'builtin-';

/** Why each quality check matters; every package runs the first three. */
const CHECK_REASONS: Record<string, string> = {
  exact_duplicates: 'Duplicated test cases inflate scores and hide gaps.',
  near_duplicates: 'Paraphrased copies of one case weigh it more than the others.',
  empty_fields: 'Rows without an input or expected output cannot be scored.',
  pii: 'Test data drawn from real users must not carry personal data.',
  length_outliers: 'Unusually long or short inputs distort length-sensitive metrics.',
  language_mismatch: 'Inputs and references in the wrong language make scores meaningless.',
  label_leakage: 'An expected answer visible in the input makes the test trivial.',
};

const BASE_CHECKS = ['exact_duplicates', 'near_duplicates', 'empty_fields'];

/** Checks each use case adds to the base ones. */
const USE_CASE_CHECKS: Record<string, string[]> = {
  customer_support: ['pii', 'length_outliers'],
  rag_qa: ['label_leakage', 'length_outliers'],
  summarisation: ['length_outliers', 'language_mismatch'],
  code_assistant: ['length_outliers'],
  agentic_workflow: ['pii'],
  translation: ['language_mismatch', 'label_leakage'],
  classification_extraction: ['label_leakage', 'pii'],
};

function fromTemplate(t: ProjectTemplate): TestPackageRecommendation {
  const checks = [...BASE_CHECKS, ...(USE_CASE_CHECKS[t.use_case] ?? ['length_outliers'])];
  return {
    id: `${BUILTIN_PREFIX}${t.name}`,
    workspace_id: null,
    builtin: true,
    name: `${t.title} package`,
    use_case: t.use_case,
    description: `The metrics, dataset checks and coverage dimensions suggested for ${t.title.toLowerCase()} (from the ${t.name} template).`,
    template: t.name,
    metrics: t.suggested_metrics.map((m) => ({
      name: m.name,
      kind: m.kind,
      description: m.description,
      threshold: m.threshold ? { ...m.threshold } : null,
    })),
    checks: checks.map((id) => ({ id, reason: CHECK_REASONS[id] ?? '' })),
    dimensions: t.dimensions.map((d) => d.name),
    created_at: null,
    updated_at: null,
  };
}

/** The built-in recommendations, one per project template, in template order (fresh copies). */
export function builtinRecommendations(): TestPackageRecommendation[] {
  return PROJECT_TEMPLATES.map(fromTemplate);
}

export function checkReason(id: string): string {
  return CHECK_REASONS[id] ?? '';
}
