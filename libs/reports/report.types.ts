/**
 * What a report holds: sections with their markdown and the figures behind them. Snake-case
 * members: stored as JSON and served as is. Pure types shared by the builder and renderers.
 */

export const SECTION_KEYS = [
  'summary',
  'metrics_overview',
  'results_by_dimension',
  'regressions',
  'failure_examples',
  'recommendations',
] as const;
export type SectionKey = (typeof SECTION_KEYS)[number];

export const REPORT_FORMATS = ['markdown', 'html', 'pdf'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** One section of a report as stored. */
export interface ReportSection {
  key: SectionKey;
  title: string;
  /** The questions the section answers. */
  questions: string[];
  /** The section as Markdown: heading, narrative and its figures. */
  markdown: string;
  /** The figures behind the section, computed from the run's results. */
  data: Record<string, unknown>;
  /** Who wrote the narrative: the workspace's judge, or the deterministic template. */
  generated_by: 'judge' | 'template';
  /** Why the judge's narrative was not used (the call failed or gave no text); null otherwise. */
  judge_error: string | null;
  /** The markdown was changed through PUT content. */
  edited: boolean;
  edited_at: string | null;
  edited_by: string | null;
}

/** A report config's section entry: which section, its title and extra questions. */
export interface ConfigSection {
  key: SectionKey;
  title?: string;
  questions?: string[];
}
