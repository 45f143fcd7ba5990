import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';
import type { JudgePair, JudgeValidationResult } from '#libs/evaluation/judge-validation.js';

/** Where a validation's human labels came from. */
export interface JudgeValidationSource {
  /** The run whose verdicts were validated (null for a judge run of a review queue, which asks the judge itself). */
  run_id: string | null;
  /**
   * `field`: a column of the run's rows held the human label; `labels`: the labels were handed in;
   * `review_queue`: a review queue's final labels of a rubric field (`field`) against the run's verdicts;
   * `review_judge_run`: the judge was applied to a review queue's finally labelled items.
   */
  kind: 'field' | 'labels' | 'review_queue' | 'review_judge_run';
  field: string | null;
  /** With `review_queue` and `review_judge_run`: the queue and the rubric version whose field held the labels. */
  queue_id?: string;
  rubric_version?: number;
  /** With `review_judge_run`: the judge run. */
  judge_run_id?: string;
  /** How a row repeated in the run gave its verdict: its first repetition. */
  repetition: 'first';
  /** Rows of the run with a judge verdict but no human label, and human labels of rows the run lacks. */
  unlabelled_rows: number;
  unmatched_labels: number;
}

/** A judged metric config version checked against human labels of the same items; never changed once kept. */
@Entity('judge_validations')
export class JudgeValidationEntity extends WorkspaceRecord {
  @Column({ name: 'metric_config_id', type: 'uuid' })
  metricConfigId: string;

  @Column({ name: 'config_name', type: 'text' })
  configName: string;

  @Column({ name: 'config_version', type: 'integer' })
  configVersion: number;

  /** The metric's name in the run. */
  @Column({ type: 'text' })
  metric: string;

  @Column({ type: 'jsonb' })
  source: JudgeValidationSource;

  @Column({ type: 'double precision' })
  level: number;

  @Column({ type: 'integer' })
  seed: number;

  /** Pairs kept (at most MAX_VALIDATION_PAIRS). */
  @Column({ type: 'integer' })
  items: number;

  @Column({ type: 'jsonb' })
  pairs: JudgePair[];

  @Column({ type: 'jsonb' })
  result: JudgeValidationResult;
}
