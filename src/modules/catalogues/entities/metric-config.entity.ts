import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';
import type { VerdictScale } from '#libs/evaluation/judges/judge.types.js';

export const METRIC_CONFIG_KINDS = ['deterministic', 'judged', 'custom'] as const;
export type MetricConfigKind = (typeof METRIC_CONFIG_KINDS)[number];

/** How a judged metric grades. */
export interface JudgedSpec {
  rubric: string;
  scale: VerdictScale;
  /** Rows pass when the normalised score is at least this (numeric scales)… */
  pass_threshold: number | null;
  /** …or when the label is one of these (label scales). */
  pass_labels: string[] | null;
}

/**
 * One version of a named metric configuration. A version may be edited until a run uses it
 * (`first_used_at`); then it is frozen and changes go into a new version.
 */
@Entity('metric_configs')
export class MetricConfigEntity extends WorkspaceRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'config_version', type: 'integer' })
  configVersion: number;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'text' })
  kind: MetricConfigKind;

  /** deterministic: the built-in metric; judged: `llm_judge`; custom: the registry op. */
  @Column({ type: 'text' })
  metric: string;

  @Column({ type: 'jsonb', default: {} })
  params: Record<string, unknown>;

  @Column({ type: 'double precision', nullable: true })
  threshold: number | null;

  @Column({ type: 'jsonb', nullable: true })
  judged: JudgedSpec | null;

  @Column({ name: 'judge_id', type: 'uuid', nullable: true })
  judgeId: string | null;

  @Column({ name: 'first_used_at', type: 'timestamptz', nullable: true })
  firstUsedAt: Date | null;

  @Column({ name: 'first_used_by_run', type: 'uuid', nullable: true })
  firstUsedByRun: string | null;
}
