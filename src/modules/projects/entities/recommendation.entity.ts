import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';

export interface RecommendedMetric {
  name: string;
  kind: 'deterministic' | 'judged';
  description: string;
  threshold: { operator: '>=' | '<='; value: number } | null;
}

/** A workspace's own test package: metrics, quality checks and dimensions for a use case. */
@Entity('test_package_recommendations')
export class RecommendationEntity extends WorkspaceRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'use_case', type: 'text' })
  useCase: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'jsonb', default: [] })
  metrics: RecommendedMetric[];

  @Column({ type: 'text', array: true, default: [] })
  checks: string[];

  @Column({ type: 'text', array: true, default: [] })
  dimensions: string[];
}
