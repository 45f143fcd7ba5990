import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One revision of a workspace's pinned default for a metric; the newest revision is in force, a null config clears the pin. */
@Entity('metric_config_defaults')
export class MetricConfigDefaultEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @Column({ name: 'metric_name', type: 'text' })
  metricName: string;

  @Column({ type: 'integer' })
  revision: number;

  @Column({ name: 'config_name', type: 'text', nullable: true })
  configName: string | null;

  @Column({ name: 'config_version', type: 'integer', nullable: true })
  configVersion: number | null;

  @Column({ type: 'text', default: '' })
  note: string;

  @Column({ name: 'set_by', type: 'uuid', nullable: true })
  setBy: string | null;

  @Column({ name: 'set_at', type: 'timestamptz', default: () => 'clock_timestamp()' })
  setAt: Date;
}
