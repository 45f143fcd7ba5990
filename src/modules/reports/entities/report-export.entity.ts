import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { ReportFormat } from '#libs/reports/report.types.js';

/** A rendered file of a report (Markdown, HTML or PDF), stored so downloads serve exactly what was exported. */
@Entity('report_exports')
export class ReportExportEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @Column({ name: 'report_id', type: 'uuid' })
  reportId: string;

  @Column({ type: 'text' })
  format: ReportFormat;

  @Column({ type: 'text' })
  filename: string;

  @Column({ name: 'content_type', type: 'text' })
  contentType: string;

  @Column({ name: 'size_bytes', type: 'integer' })
  sizeBytes: number;

  @Column({ type: 'bytea', select: false })
  content: Buffer;

  /** The report's version when it was rendered: a later edit makes downloads render afresh. */
  @Column({ name: 'report_version', type: 'integer' })
  reportVersion: number;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', default: () => 'clock_timestamp()' })
  createdAt: Date;
}
