import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';

export interface ThresholdSpec {
  operator: '>=' | '<=';
  value: number;
}

export interface PlanDatasetSpec {
  dataset_id: string;
  /** A pinned version; null follows the dataset's current (else latest) version. */
  version_id: string | null;
  partition_id: string | null;
}

export interface PlanMetricSpec {
  name: string;
  /** The overall pass rule of the metric's mean score. */
  threshold: ThresholdSpec;
  /** Stricter or looser rules for the rows of one dimension value. */
  per_dimension: Array<{ dimension: string; value: string; threshold: ThresholdSpec }>;
  /** Counts toward the release rule (default true). */
  gating: boolean;
  /** A judged metric's judge must be validated against human labels (absent: no such demand). */
  validation?: PlanValidationSpec | null;
}

/** What a plan demands of a judged metric's validation: the lower bounds of its intervals. */
export interface PlanValidationSpec {
  min_kappa_lower: number | null;
  min_rates_lower: number | null;
  on_failure: 'fail' | 'warn';
}

export interface ReleaseRuleSpec {
  /** `all_metrics`: every gating metric meets its threshold; `min_metrics_passing`: at least `min_metrics_passing` of them do. */
  mode: 'all_metrics' | 'min_metrics_passing';
  min_metrics_passing: number | null;
  /** Per-dimension thresholds must hold too. */
  include_dimension_thresholds: boolean;
  /** The run's row pass rate must reach this (null: no such rule). */
  min_row_pass_rate: number | null;
}

/** A named, versioned test plan; the definitions live in its versions. */
@Entity('test_plans')
export class TestPlanEntity extends WorkspaceRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ name: 'latest_version', type: 'integer', default: 1 })
  latestVersion: number;
}

/** One immutable version of a test plan. */
@Entity('test_plan_versions')
export class TestPlanVersionEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @Column({ name: 'test_plan_id', type: 'uuid' })
  testPlanId: string;

  @Column({ type: 'integer' })
  number: number;

  @Column({ type: 'text', default: '' })
  message: string;

  @Column({ type: 'jsonb', default: [] })
  datasets: PlanDatasetSpec[];

  @Column({ type: 'jsonb', default: [] })
  metrics: PlanMetricSpec[];

  @Column({ name: 'release_rule', type: 'jsonb' })
  releaseRule: ReleaseRuleSpec;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
