import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { ReportFormat } from '#libs/reports/report.types.js';

/** A workspace's report defaults: config, judge and formats. */
@Entity('report_settings')
export class ReportSettingsEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @Column({ name: 'default_config_id', type: 'uuid', nullable: true })
  defaultConfigId: string | null;

  @Column({ name: 'judge_id', type: 'uuid', nullable: true })
  judgeId: string | null;

  @Column({ type: 'text', array: true, default: () => "'{markdown,html,pdf}'" })
  formats: ReportFormat[];

  @Column({ name: 'default_format', type: 'text', default: 'pdf' })
  defaultFormat: ReportFormat;

  @Column({ name: 'updated_by', type: 'uuid', nullable: true })
  updatedBy: string | null;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
