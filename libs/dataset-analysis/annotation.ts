import {
  cohensKappa as agreementCohensKappa,
  fleissKappa as agreementFleissKappa,
} from '#libs/evaluation/statistics/agreement.js';
import { round } from './stats.js';

export type Label = string | null;

export interface LabelShare {
  label: string;
  count: number;
  share: number;
}

export function labelDistribution(labels: Label[]): LabelShare[] {
  const counts = new Map<string, number>();
  for (const l of labels) if (l !== null) counts.set(l, (counts.get(l) ?? 0) + 1);
  const total = [...counts.values()].reduce((s, c) => s + c, 0);
  return [...counts.entries()]
    .map(([label, count]) => ({ label, count, share: round(count / total) }))
    .sort((a, b) => b.count - a.count || a.label.localeCompare(b.label));
}

/** Cohen's kappa of two raters over the items both labelled (agreement.ts), to 4 decimals; null with fewer than 2 such items or when chance agreement is total. */
export function cohensKappa(a: Label[], b: Label[]): number | null {
  const kappa = agreementCohensKappa(a, b).value;
  return kappa === null ? null : round(kappa);
}

/**
 * Fleiss' kappa (agreement.ts) of items x category counts, to 4 decimals. Items may have
 * different numbers of labels (Gwet's generalisation); annotationAnalysis passes only the rows
 * every label column labelled.
 */
export function fleissKappa(table: Array<Record<string, number>>): number | null {
  const ratings = table.map((row) => Object.entries(row).flatMap(([label, count]) => Array<string>(count).fill(label)));
  const kappa = agreementFleissKappa(ratings).value;
  return kappa === null ? null : round(kappa);
}

/** Landis & Koch's reading of a kappa. */
export function interpret(kappa: number | null): string | null {
  if (kappa === null) return null;
  if (kappa < 0) return 'poor';
  if (kappa <= 0.2) return 'slight';
  if (kappa <= 0.4) return 'fair';
  if (kappa <= 0.6) return 'moderate';
  if (kappa <= 0.8) return 'substantial';
  return 'almost perfect';
}

function labelOf(value: unknown): Label {
  return value === undefined || value === null || value === '' ? null : String(value);
}

/** Columns that look like labels: strings or booleans, 2..20 distinct values that repeat. */
export function labelColumns(rows: Array<Record<string, unknown>>): string[] {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return columns.filter((c) => {
    const present = rows.map((r) => r[c]).filter((v) => v !== undefined && v !== null && v !== '');
    if (!present.length || !present.every((v) => typeof v === 'string' || typeof v === 'boolean')) return false;
    const distinct = new Set(present.map(String)).size;
    return distinct >= 2 && distinct <= 20 && distinct < present.length / 2;
  });
}

export interface AnnotationAnalysis {
  columns: Array<{
    column: string;
    labelled: number;
    missing_rate: number;
    distribution: LabelShare[];
    by_dimension: Record<string, Record<string, LabelShare[]>>;
  }>;
  agreement: {
    method: 'cohen' | 'fleiss' | null;
    kappa: number | null;
    interpretation: string | null;
    /** Rows every label column labelled. */
    rows: number;
    pairwise: Array<{ a: string; b: string; kappa: number | null }>;
  };
}

/** Label distributions per column (overall and per dimension value) and the agreement of the columns as annotators of the same rows. */
export function annotationAnalysis(
  rows: Array<Record<string, unknown>>,
  opts: { labelColumns: string[]; dimensions?: Record<string, Label[]> },
): AnnotationAnalysis {
  const labels = Object.fromEntries(opts.labelColumns.map((c) => [c, rows.map((r) => labelOf(r[c]))]));
  const columns = opts.labelColumns.map((column) => {
    const values = labels[column];
    const by_dimension = Object.fromEntries(
      Object.entries(opts.dimensions ?? {}).map(([dimension, dims]) => {
        const groups = new Map<string, Label[]>();
        dims.forEach((d, i) => {
          const key = d ?? '(none)';
          groups.set(key, [...(groups.get(key) ?? []), values[i]]);
        });
        return [
          dimension,
          Object.fromEntries(
            [...groups.entries()]
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([value, ls]) => [value, labelDistribution(ls)]),
          ),
        ];
      }),
    );
    const labelled = values.filter((v) => v !== null).length;
    return {
      column,
      labelled,
      missing_rate: rows.length ? round(1 - labelled / rows.length) : 0,
      distribution: labelDistribution(values),
      by_dimension,
    };
  });
  const pairwise: AnnotationAnalysis['agreement']['pairwise'] = [];
  for (let i = 0; i < opts.labelColumns.length; i++)
    for (let j = i + 1; j < opts.labelColumns.length; j++)
      pairwise.push({
        a: opts.labelColumns[i],
        b: opts.labelColumns[j],
        kappa: cohensKappa(labels[opts.labelColumns[i]], labels[opts.labelColumns[j]]),
      });
  const complete = rows
    .map((_, i) => opts.labelColumns.map((c) => labels[c][i]))
    .filter((ls): ls is string[] => ls.every((l) => l !== null));
  let method: AnnotationAnalysis['agreement']['method'] = null;
  let kappa: number | null = null;
  if (opts.labelColumns.length === 2) {
    method = 'cohen';
    kappa = pairwise[0].kappa;
  } else if (opts.labelColumns.length > 2) {
    method = 'fleiss';
    kappa = fleissKappa(
      complete.map((ls) => ls.reduce<Record<string, number>>((acc, l) => ({ ...acc, [l]: (acc[l] ?? 0) + 1 }), {})),
    );
  }
  return { columns, agreement: { method, kappa, interpretation: interpret(kappa), rows: complete.length, pairwise } };
}
