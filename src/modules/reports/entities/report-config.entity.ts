import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';
import type { ConfigSection } from '#libs/reports/report.types.js';

/** Which sections a report has, in which order, with their titles and extra questions. */
@Entity('report_configs')
export class ReportConfigEntity extends WorkspaceRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'jsonb' })
  sections: ConfigSection[];
}
