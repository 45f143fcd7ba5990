import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { SystemRole } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { rolesForGroups, type SsoSettings } from '#libs/config/sso-settings.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { AuthErrors } from '../auth/auth.errors.js';
import type { UserEntity } from '../users/entities/user.entity.js';
import { UsersService } from '../users/users.service.js';
import { MembersService, type SsoMembershipChange } from '../workspaces/members.service.js';
import type { ProvenIdentity } from './oidc-relying-party.service.js';
import { SsoErrors } from './sso.errors.js';

export interface SsoSignIn {
  user: UserEntity;
  created: boolean;
  systemRole: { from: SystemRole; to: SystemRole } | null;
  memberships: SsoMembershipChange[];
  /** Mapped workspace ids that do not exist (a stale SSO_GROUP_ROLES). */
  missingWorkspaces: string[];
}

const EMAIL_MAX = 320;

/**
 * The account behind a proven SSO identity: found by issuer and subject, else tied to the account
 * of the same (verified) e-mail, else created without a password. Its system role and its roles in
 * the mapped workspaces follow the identity provider's groups at every login.
 */
@Injectable()
export class SsoProvisioningService {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly users: UsersService,
    private readonly members: MembersService,
    private readonly audit: AuditService,
  ) {}

  async signIn(identity: ProvenIdentity, sso: SsoSettings): Promise<SsoSignIn> {
    const email = identity.email?.trim().toLowerCase();
    if (!email || !email.includes('@') || email.length > EMAIL_MAX)
      throw new DomainError(
        SsoErrors.sso_identity_unusable,
        'The identity provider gave no e-mail address for this user: ask for the email scope and claim',
      );
    if (identity.emailVerified === false)
      throw new DomainError(
        SsoErrors.sso_identity_unusable,
        `The identity provider says ${email} is not verified; verify it there first`,
      );
    return this.transactions.run(async () => {
      // The admins before any user row: the lock order of every system-role change.
      const admins = sso.adminGroups ? await this.users.lockActiveAdmins() : [];
      const { user, created } = await this.account(identity, email, sso.linkExistingAccounts);
      if (user.status !== 'active')
        throw new DomainError(
          AuthErrors.account_deactivated,
          'This account is deactivated; ask a system admin to reactivate it',
        );
      const actor = { userId: user.id, email: user.email };
      const systemRole = sso.adminGroups
        ? await this.users.applySsoSystemRole(
            user,
            identity.groups.some((g) => sso.adminGroups!.has(g)) ? 'admin' : 'user',
            admins,
            actor,
          )
        : null;
      const { changes, missing } = await this.members.applySsoRoles(
        user.id,
        rolesForGroups(sso.groupRoles, identity.groups),
        actor,
      );
      if (created)
        await this.audit.record({
          actor,
          action: 'auth.sso_provisioned',
          targetType: 'user',
          targetId: user.id,
          details: { issuer: identity.issuer, subject: identity.subject, email },
        });
      return { user, created, systemRole, memberships: changes, missingWorkspaces: missing };
    });
  }

  /** The user of the identity, its row locked; tied or created on the first login. */
  private async account(
    identity: ProvenIdentity,
    email: string,
    linkExisting: boolean,
  ): Promise<{ user: UserEntity; created: boolean }> {
    const known = await this.users.findBySsoIdentityLocked(identity.issuer, identity.subject);
    if (known) return { user: known, created: false };
    const byEmail = await this.users.findByEmail(email);
    // Whoever the provider lets claim an address would otherwise become that account (an admin's, say).
    if (byEmail && !linkExisting)
      throw new DomainError(
        SsoErrors.sso_account_exists,
        `An account of ${email} exists and is not tied to single sign-on; a system admin may allow it (SSO_LINK_EXISTING_ACCOUNTS)`,
      );
    const user = byEmail
      ? (await this.users.findLocked(byEmail.id))!
      : await this.users.createUser(
          { email, displayName: (identity.name?.trim() || email.split('@')[0]).slice(0, 200), passwordHash: null },
          undefined,
        );
    await this.users.linkSsoIdentity(user, identity.issuer, identity.subject, { userId: user.id, email: user.email });
    return { user, created: !byEmail };
  }
}
