import { Column, Entity } from 'typeorm';
import { WorkspaceRecord } from '#libs/database/entity-columns.js';

/** An API key or credential, AES-256-GCM encrypted at rest; never leaves the service except by reveal. */
@Entity('workspace_secrets')
export class WorkspaceSecretEntity extends WorkspaceRecord {
  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'bytea', select: false })
  ciphertext: Buffer;

  @Column({ type: 'bytea', select: false })
  iv: Buffer;

  @Column({ name: 'auth_tag', type: 'bytea', select: false })
  authTag: Buffer;

  /** Fingerprint of the key that sealed the value (see libs/crypto/secret-cipher.ts). */
  @Column({ name: 'key_id', type: 'text', default: '' })
  keyId: string;

  @Column({ name: 'updated_by', type: 'uuid', nullable: true })
  updatedBy: string | null;

  @Column({ name: 'last_revealed_at', type: 'timestamptz', nullable: true })
  lastRevealedAt: Date | null;
}
