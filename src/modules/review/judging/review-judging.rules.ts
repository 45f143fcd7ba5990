import { DomainError } from '#libs/common/domain-error.js';
import type { JudgePair } from '#libs/evaluation/judge-validation.js';
import type { Verdict } from '#libs/evaluation/judges/judge.types.js';
import type { JudgedSpec } from '../../catalogues/entities/metric-config.entity.js';
import { ReviewJudgingErrors } from '../review.errors.js';
import type { LabelValues, RubricField } from '../review.rules.js';

/** A numeric judge scale's pass threshold when the config sets none (as runs score it). */
const DEFAULT_PASS_THRESHOLD = 0.75;

/** An item ready for the judge: its reference, its final label's value and verdict, each reviewer's verdict. */
export interface LabelledItem {
  ref: string;
  value: LabelValues[string];
  human: boolean;
  reviews: Array<boolean | null>;
}

/** The rubric field's fit for a judge run; answers `positive` as it is kept (lower-cased), or null. */
export function checkField(
  field: RubricField | undefined,
  name: string,
  version: number,
  positive: string[] | undefined,
): string[] | null {
  const refuse = (message: string) =>
    new DomainError(ReviewJudgingErrors.judge_run_field_invalid, message, { field: name, rubric_version: version });
  if (!field) throw refuse(`Rubric version ${version} of the queue has no field ${name}`);
  if (field.type === 'free_text') throw refuse(`${name} is a free-text field; a judge is validated on a rated field`);
  const values = positive?.map((v) => v.trim().toLowerCase()) ?? null;
  if (field.type === 'pass_fail') {
    if (values) throw refuse(`${name} is a pass/fail field: its true labels pass; it takes no positive`);
    return null;
  }
  if (field.type === 'categorical') {
    const options = (field.options ?? []).map((o) => o.toLowerCase());
    if (!values)
      throw refuse(`${name} is categorical: name the options that pass in positive (of ${options.join(', ')})`);
    const unknown = values.filter((v) => !options.includes(v));
    if (unknown.length)
      throw refuse(`positive names ${unknown.join(', ')}, not options of ${name} (${options.join(', ')})`);
    return values;
  }
  const outside = values?.filter((v) => !/^-?\d+$/.test(v) || Number(v) < field.min! || Number(v) > field.max!) ?? [];
  if (outside.length)
    throw refuse(`positive names ${outside.join(', ')}, not scores of ${name} (${field.min}..${field.max})`);
  return values;
}

/**
 * A rubric value as a verdict: `positive` (as text) when given; a pass/fail field's own value; a
 * score by its place on the field's scale against the judge's pass threshold. Null when absent.
 */
export function humanVerdict(
  value: boolean | string | number | undefined,
  field: RubricField,
  positive: readonly string[] | null,
  judged: Pick<JudgedSpec, 'pass_threshold'>,
): boolean | null {
  if (value === undefined || value === null || value === '') return null;
  if (positive) return positive.includes(String(value).trim().toLowerCase());
  if (field.type === 'pass_fail') return typeof value === 'boolean' ? value : null;
  if (field.type === 'numeric' && typeof value === 'number' && field.max! > field.min!)
    return (value - field.min!) / (field.max! - field.min!) >= (judged.pass_threshold ?? DEFAULT_PASS_THRESHOLD);
  return null;
}

/** The judge's verdict beside the human one; a score on the same scale as the judge's is kept for rank agreement and error. */
export function pairOf(l: LabelledItem, verdict: Verdict, judged: JudgedSpec, field: RubricField): JudgePair {
  const scale = judged.scale;
  const sameScale =
    field.type === 'numeric' && scale.type === 'numeric' && scale.min === field.min && scale.max === field.max;
  return {
    item: l.ref,
    judge_passed:
      scale.type === 'numeric'
        ? verdict.normalized >= (judged.pass_threshold ?? DEFAULT_PASS_THRESHOLD)
        : (judged.pass_labels ?? []).includes(verdict.label ?? ''),
    judge_score: verdict.score,
    judge_label: verdict.label ?? null,
    human_passed: l.human,
    human_score: sameScale && typeof l.value === 'number' ? l.value : null,
    dimensions: {},
    reviews: l.reviews,
  };
}

/** The output as the judge reads it: text as it is, anything else as its JSON. */
export function textOf(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}
