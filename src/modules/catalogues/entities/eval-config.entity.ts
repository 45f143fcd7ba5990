import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';

/** A metric of an eval config: a metric config by name, pinned to a version or resolved when the run starts. */
export interface EvalMetricRef {
  config_name: string;
  /** null: the version in force when a run starts (see metric-configs/resolved). */
  config_version: number | null;
  /** Overrides the config's row pass threshold. */
  threshold: number | null;
  /** The run fails when fewer rows than this share pass this metric. */
  min_pass_rate: number | null;
  /** Counts toward the row verdict (false: reported only). */
  gating: boolean;
}

export interface PassRule {
  /** A row passes when all gating metrics pass, or when any does. */
  row: 'all' | 'any';
  /** The run passes when at least this share of scored rows pass (and every metric meets its min_pass_rate). */
  min_pass_rate: number;
  /** Rows whose SUT call failed count as failed (true) or are left out of the rate (false). */
  errors_fail: boolean;
}

/** A named bundle of metric configs, a default judge and the pass rule a run is judged by. */
@Entity('eval_configs')
export class EvalConfigEntity extends WorkspaceRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'jsonb' })
  metrics: EvalMetricRef[];

  @Column({ name: 'default_judge_id', type: 'uuid', nullable: true })
  defaultJudgeId: string | null;

  @Column({ name: 'pass_rule', type: 'jsonb' })
  passRule: PassRule;
}
