/**
 * The review family's rules that need neither HTTP nor the database: a rubric's soundness, a
 * label's validity against its rubric version, the consensus of an item's labels, and the
 * agreement report of a queue's labels (computed by libs/evaluation/statistics/agreement.ts).
 */
import {
  agreementReport,
  estimate,
  type Estimate,
  type MeasurementLevel,
  type RatingValue,
} from '#libs/evaluation/statistics/agreement.js';

export const RUBRIC_FIELD_TYPES = ['pass_fail', 'categorical', 'numeric', 'free_text'] as const;
export type RubricFieldType = (typeof RUBRIC_FIELD_TYPES)[number];

export interface RubricField {
  name: string;
  type: RubricFieldType;
  required: boolean;
  description?: string;
  /** categorical: the options, in their order. */
  options?: string[];
  /** numeric: the integer scale min..max. */
  min?: number;
  max?: number;
}

export type LabelValues = Record<string, boolean | string | number>;

export interface FieldError {
  field: string;
  message: string;
}

/** Longest free-text answer, in characters. */
export const MAX_FREE_TEXT = 10_000;

/** What is wrong with a rubric's fields (none: it is sound). */
export function rubricProblems(fields: RubricField[]): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    const at = `rubric.fields[${i}]`;
    if (seen.has(f.name)) errors.push({ field: `${at}.name`, message: `the name ${f.name} is used twice` });
    seen.add(f.name);
    if (f.type === 'categorical') {
      if (!f.options || f.options.length < 2)
        errors.push({ field: `${at}.options`, message: 'a categorical field needs at least 2 options' });
      else if (new Set(f.options).size !== f.options.length)
        errors.push({ field: `${at}.options`, message: 'options must differ' });
    } else if (f.options !== undefined)
      errors.push({ field: `${at}.options`, message: 'only a categorical field has options' });
    if (f.type === 'numeric') {
      if (f.min === undefined || f.max === undefined)
        errors.push({ field: `${at}.min`, message: 'a numeric field needs min and max' });
      else if (f.min >= f.max) errors.push({ field: `${at}.max`, message: 'max must be above min' });
    } else if (f.min !== undefined || f.max !== undefined)
      errors.push({ field: `${at}.min`, message: 'only a numeric field has min and max' });
  });
  if (!fields.some((f) => f.required))
    errors.push({ field: 'rubric.fields', message: 'at least one field must be required' });
  return errors;
}

/** What is wrong with a label against its rubric version (none: it is valid). */
export function labelProblems(fields: RubricField[], values: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  const known = new Map(fields.map((f) => [f.name, f]));
  for (const name of Object.keys(values))
    if (!known.has(name)) errors.push({ field: `values.${name}`, message: 'the rubric has no such field' });
  for (const f of fields) {
    const at = `values.${f.name}`;
    const value = values[f.name];
    if (value === undefined || value === null) {
      if (f.required) errors.push({ field: at, message: 'required' });
      continue;
    }
    if (f.type === 'pass_fail' && typeof value !== 'boolean')
      errors.push({ field: at, message: 'must be true (pass) or false (fail)' });
    if (f.type === 'categorical' && (typeof value !== 'string' || !f.options!.includes(value)))
      errors.push({ field: at, message: `must be one of ${f.options!.join(', ')}` });
    if (f.type === 'numeric' && (!Number.isInteger(value) || (value as number) < f.min! || (value as number) > f.max!))
      errors.push({ field: at, message: `must be an integer from ${f.min} to ${f.max}` });
    if (f.type === 'free_text' && (typeof value !== 'string' || value.length > MAX_FREE_TEXT))
      errors.push({ field: at, message: `must be text of at most ${MAX_FREE_TEXT} characters` });
  }
  return errors;
}

/** The label values without absent and null members. */
export function cleanValues(values: Record<string, unknown>): LabelValues {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined && v !== null)) as LabelValues;
}

/**
 * The final label of an item's labels when they agree on every required field: those fields, and
 * each optional field every label gives the same value; null when they disagree.
 */
export function consensus(fields: RubricField[], labels: LabelValues[]): LabelValues | null {
  if (!labels.length) return null;
  const final: LabelValues = {};
  for (const f of fields) {
    const values = labels.map((l) => l[f.name]);
    const same = values.every((v) => v !== undefined && v === values[0]);
    if (f.required && !same) return null;
    if (same) final[f.name] = values[0];
  }
  return final;
}

/** One label as the agreement figures read it. */
export interface LabelCell {
  item: number;
  reviewer: string;
  values: LabelValues;
}

export interface FieldAgreement {
  field: string;
  type: RubricFieldType;
  /** Items labelled by at least two reviewers. */
  rated_items: number;
  percent_agreement: Estimate;
  cohens_kappa: Estimate;
  fleiss_kappa: Estimate;
  /** By level: nominal for pass/fail and categorical; interval and ordinal for numeric. */
  krippendorff_alpha: Partial<Record<MeasurementLevel, Estimate>>;
  per_reviewer: Array<{
    reviewer_id: string;
    labelled: number;
    with_others: Estimate;
    with_final: Estimate;
  }>;
  /** Items whose labels of this field differ. */
  disagreements: number;
}

export interface AgreementOptions {
  seed?: number;
  confidence?: number;
  resamples?: number;
}

/** A rating of a field's value: pass/fail as text so every figure reads it as a category. */
function rating(type: RubricFieldType, value: unknown): RatingValue | null {
  if (value === undefined || value === null) return null;
  if (type === 'pass_fail') return value ? 'pass' : 'fail';
  return value as RatingValue;
}

/**
 * The agreement figures of each rated field (free text is not compared): the table is one row per
 * item, one column per reviewer (`reviewers`, in that order); `finals[item]` the item's final label.
 */
export function fieldAgreement(
  fields: RubricField[],
  items: number,
  reviewers: string[],
  labels: LabelCell[],
  finals: Array<LabelValues | null>,
  options: AgreementOptions,
): FieldAgreement[] {
  const column = new Map(reviewers.map((r, i) => [r, i]));
  return fields
    .filter((f) => f.type !== 'free_text')
    .map((f) => {
      const table: Array<Array<RatingValue | null>> = Array.from({ length: items }, () =>
        new Array<RatingValue | null>(reviewers.length).fill(null),
      );
      for (const l of labels) table[l.item][column.get(l.reviewer)!] = rating(f.type, l.values[f.name]);
      const categories = f.type === 'categorical' ? f.options : undefined;
      const levels: MeasurementLevel[] = f.type === 'numeric' ? ['interval', 'ordinal'] : ['nominal'];
      const base = agreementReport(table, { ...options, level: levels[0], categories });
      const alpha: Partial<Record<MeasurementLevel, Estimate>> = { [levels[0]]: base.krippendorff_alpha };
      for (const level of levels.slice(1))
        alpha[level] = agreementReport(table, { ...options, level, categories }).krippendorff_alpha;
      const final = finals.map((v) => (v ? rating(f.type, v[f.name]) : null));
      return {
        field: f.name,
        type: f.type,
        rated_items: base.rated_items,
        percent_agreement: base.percent_agreement,
        cohens_kappa: base.cohens_kappa,
        fleiss_kappa: base.fleiss_kappa,
        krippendorff_alpha: alpha,
        per_reviewer: base.per_rater.map((p) => ({
          reviewer_id: reviewers[p.rater],
          labelled: p.labelled,
          with_others: p.with_others,
          with_final: estimate(
            items,
            (indices) => {
              let equal = 0;
              let counted = 0;
              for (const i of indices) {
                const own = table[i][p.rater];
                if (own === null || final[i] === null) continue;
                counted++;
                if (own === final[i]) equal++;
              }
              return counted === 0 ? 'no item this reviewer labelled has a final label' : equal / counted;
            },
            options,
          ),
        })),
        disagreements: base.disagreements.length,
      };
    });
}
