import { Column, Entity } from 'typeorm';
import type { WorkspaceRole } from '#libs/auth/roles.js';
import { BaseRecord } from '#libs/database/entity-columns.js';

/** Stored states; `expired` is derived (pending and past expires_at) when read. */
export type StoredInvitationStatus = 'pending' | 'accepted' | 'revoked';
export type InvitationState = StoredInvitationStatus | 'expired';

@Entity('workspace_invitations')
export class WorkspaceInvitationEntity extends BaseRecord {
  @Column({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  /** Lower-cased. */
  @Column({ type: 'text' })
  email: string;

  @Column({ type: 'text' })
  role: WorkspaceRole;

  /** SHA-256 of the invitation token; the token itself is shown once. */
  @Column({ name: 'token_hash', type: 'text', select: false, unique: true })
  tokenHash: string;

  @Column({ type: 'text', default: 'pending' })
  status: StoredInvitationStatus;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'invited_by', type: 'uuid', nullable: true })
  invitedBy: string | null;

  @Column({ name: 'accepted_by', type: 'uuid', nullable: true })
  acceptedBy: string | null;

  @Column({ name: 'accepted_at', type: 'timestamptz', nullable: true })
  acceptedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'sent_count', type: 'int', default: 1 })
  sentCount: number;

  @Column({ name: 'last_sent_at', type: 'timestamptz', default: () => 'now()' })
  lastSentAt: Date;
}
