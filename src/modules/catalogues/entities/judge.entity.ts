import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';
import type { JudgeProvider } from '#libs/evaluation/judges/judge.types.js';

/** A connection to an LLM that grades outputs; its key is a workspace secret, by reference. */
@Entity('judges')
export class JudgeEntity extends WorkspaceRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'text' })
  provider: JudgeProvider;

  @Column({ name: 'base_url', type: 'text' })
  baseUrl: string;

  @Column({ type: 'text' })
  model: string;

  @Column({ name: 'api_version', type: 'text', nullable: true })
  apiVersion: string | null;

  @Column({ type: 'jsonb', default: {} })
  parameters: Record<string, unknown>;

  @Column({ name: 'json_mode', type: 'boolean', default: true })
  jsonMode: boolean;

  @Column({ name: 'timeout_ms', type: 'integer' })
  timeoutMs: number;

  @Column({ name: 'max_attempts', type: 'integer' })
  maxAttempts: number;

  @Column({ name: 'max_concurrency', type: 'integer' })
  maxConcurrency: number;

  @Column({ name: 'secret_id', type: 'uuid', nullable: true })
  secretId: string | null;
}
