/** The typed shape of the built-in project templates (data in the sibling files). */

export interface TemplateDimensionValue {
  /** snake_case identifier */
  value: string;
  description: string;
}

export interface TemplateDimension {
  /** snake_case identifier */
  name: string;
  description: string;
  values: readonly TemplateDimensionValue[];
}

export interface TemplateMetric {
  name: string;
  kind: 'deterministic' | 'judged';
  description: string;
  threshold: { operator: '>=' | '<='; value: number } | null;
}

export interface ProjectTemplate {
  /** kebab-case; the {name} of GET /templates/{name} */
  name: string;
  title: string;
  description: string;
  use_case: string;
  dimensions: readonly TemplateDimension[];
  suggested_metrics: readonly TemplateMetric[];
}
