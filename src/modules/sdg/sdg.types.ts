/** How an SDG adapter makes rows. */
export interface TemplateSpec {
  /** Column -> template over `{{seed.<column>}}`, `{{dim.<name>}}` and `{{index}}`. */
  columns: Record<string, string>;
  /** Values combined with every seed row (their cartesian product). */
  dimensions: Record<string, string[]>;
  /** Also write each dimension's value as a column of the row. */
  dimension_columns: boolean;
}

export interface LlmSpec {
  /** The instruction, a template over `{{seed.<column>}}` and `{{dim.<name>}}`. */
  prompt: string;
  /** Rows asked for per prompt (per seed row and dimension combination). */
  count: number;
  /** The columns every generated row must have. */
  columns: string[];
  dimensions: Record<string, string[]>;
  dimension_columns: boolean;
}

export type SdgSpec = TemplateSpec | LlmSpec;
