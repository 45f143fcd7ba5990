import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One service-wide setting (e.g. `branding`): a JSON document with a version counter for optimistic concurrency. */
@Entity('settings')
export class SettingEntity {
  @PrimaryColumn({ type: 'text' })
  key: string;

  @Column({ type: 'jsonb' })
  value: Record<string, unknown>;

  /** 1 on the first write, +1 on each later one. */
  @Column({ type: 'integer', default: 1 })
  version: number;

  @Column({ name: 'updated_by', type: 'uuid', nullable: true })
  updatedBy: string | null;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}
