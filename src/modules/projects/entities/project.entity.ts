import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';

/** One coverage axis of a project, as a template lists it (or edited). */
export interface ProjectDimension {
  name: string;
  description: string;
  values: Array<{ value: string; description: string }>;
}

/** One AI application under evaluation: its dimensions, linked SUTs and datasets, and one test plan version. */
@Entity('projects')
export class ProjectEntity extends WorkspaceRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'text', nullable: true })
  template: string | null;

  @Column({ type: 'jsonb', default: [] })
  dimensions: ProjectDimension[];

  @Column({ name: 'sut_ids', type: 'uuid', array: true, default: [] })
  sutIds: string[];

  @Column({ name: 'dataset_ids', type: 'uuid', array: true, default: [] })
  datasetIds: string[];

  @Column({ name: 'test_plan_id', type: 'uuid', nullable: true })
  testPlanId: string | null;

  @Column({ name: 'test_plan_version', type: 'integer', nullable: true })
  testPlanVersion: number | null;
}
