import { Column, Entity, VersionColumn } from 'typeorm';
import { BaseRecord } from '#libs/database/entity-columns.js';
import type { SystemRole } from '#libs/auth/roles.js';

export type UserStatus = 'active' | 'deactivated';

@Entity('users')
export class UserEntity extends BaseRecord {
  /** Stored lower-cased; unique case-insensitively. */
  @Column({ type: 'text' })
  email: string;

  @Column({ name: 'display_name', type: 'text' })
  displayName: string;

  @Column({ name: 'password_hash', type: 'text', nullable: true, select: false })
  passwordHash: string | null;

  @Column({ name: 'system_role', type: 'text', default: 'user' })
  systemRole: SystemRole;

  @Column({ type: 'text', default: 'active' })
  status: UserStatus;

  @Column({ name: 'last_login_at', type: 'timestamptz', nullable: true })
  lastLoginAt: Date | null;

  @Column({ name: 'deactivated_at', type: 'timestamptz', nullable: true })
  deactivatedAt: Date | null;

  @Column({ name: 'password_changed_at', type: 'timestamptz', nullable: true })
  passwordChangedAt: Date | null;

  /** The OpenID Connect issuer and subject of a user who signs in through SSO; both null otherwise. */
  @Column({ name: 'sso_issuer', type: 'text', nullable: true })
  ssoIssuer: string | null;

  @Column({ name: 'sso_subject', type: 'text', nullable: true })
  ssoSubject: string | null;

  @VersionColumn({ default: 1 })
  version: number;
}
