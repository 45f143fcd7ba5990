import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';
import type { ReportSection } from '#libs/reports/report.types.js';

/** A report built from a run: its sections (markdown and figures), which config and judge built it. */
@Entity('reports')
export class ReportEntity extends WorkspaceRecord {
  @Column({ name: 'run_id', type: 'uuid' })
  runId: string;

  @Column({ name: 'config_id', type: 'uuid', nullable: true })
  configId: string | null;

  @Column({ name: 'judge_id', type: 'uuid', nullable: true })
  judgeId: string | null;

  @Column({ name: 'baseline_run_id', type: 'uuid', nullable: true })
  baselineRunId: string | null;

  @Column({ type: 'text' })
  title: string;

  @Column({ type: 'jsonb' })
  sections: ReportSection[];

  @Column({ name: 'generated_at', type: 'timestamptz', default: () => 'now()' })
  generatedAt: Date;
}
