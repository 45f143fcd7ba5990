import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';

/** A system under test: the application a workspace evaluates, reached through its connections. */
@Entity('suts')
export class SutEntity extends WorkspaceRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'text', array: true, default: '{}' })
  tags: string[];
}
