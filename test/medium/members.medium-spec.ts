import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { hashSecretToken } from '#libs/common/secret-token.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { ApiKeysService } from '#src/modules/api-keys/api-keys.service.js';
import { UserCandidatesQuery } from '#src/modules/workspaces/dto/member.dto.js';
import { MembersService } from '#src/modules/workspaces/members.service.js';
import { WorkspacesModule } from '#src/modules/workspaces/workspaces.module.js';
import {
  callerAs,
  domainError,
  principalOf,
  startMedium,
  sysadminIn,
  teamIn,
  type Caller,
  type Medium,
} from './medium.js';

/**
 * MembersService called directly over the real database: who may add, change and remove whom,
 * the last owner, leaving, users created straight into a workspace, candidates, two owners acting
 * on each other at once, and the invitation path (addOrUpgradeMember). The route guard's part
 * (which role reaches an operation at all) and the request validation are the e2e file's.
 */
describe('service tier: workspace members', () => {
  let s: Medium;
  let members: MembersService;

  beforeAll(async () => {
    s = await startMedium([WorkspacesModule]);
    members = s.get(MembersService);
  });
  afterAll(async () => {
    await s?.close();
  });

  /** A workspace whose only member is its owner. */
  const solo = async (): Promise<Caller> => s.caller();

  /** The membership's role as the table holds it (undefined: not a member). */
  const roleOf = async (userId: string, workspaceId: string): Promise<string | undefined> =>
    (
      await s.query<{ role: string }>('SELECT role FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [
        workspaceId,
        userId,
      ])
    )[0]?.role;

  const membership = async (userId: string, workspaceId: string) =>
    (
      await s.query<{ role: string; added_by: string | null }>(
        'SELECT role, added_by FROM workspace_members WHERE workspace_id = $1 AND user_id = $2',
        [workspaceId, userId],
      )
    )[0];

  const auditOf = (action: string, targetId: string, workspaceId: string) =>
    s.query<{ actor_id: string | null; details: Record<string, unknown> }>(
      'SELECT actor_id, details FROM audit_events WHERE action = $1 AND target_id = $2 AND workspace_id = $3 ORDER BY created_at, id',
      [action, targetId, workspaceId],
    );

  const owners = async (workspaceId: string) =>
    (
      await s.query<{ user_id: string }>(
        `SELECT user_id FROM workspace_members WHERE workspace_id = $1 AND role = 'owner' ORDER BY user_id`,
        [workspaceId],
      )
    ).map((r) => r.user_id);

  describe('list', () => {
    it('answers every member with their user, by join time then email, a deactivated user as such', async () => {
      const t = await teamIn(s);
      const gone = await s.factory.newUser({ status: 'deactivated' });
      await s.factory.addMember(t.id, gone.id, 'viewer');
      // Two members who joined at the same moment come by email.
      const [a, b] = [
        await s.factory.newUser({ email: 'b-same@list.test' }),
        await s.factory.newUser({ email: 'a-same@list.test' }),
      ];
      await s.factory.addMember(t.id, a.id, 'member');
      await s.factory.addMember(t.id, b.id, 'member');
      await s.query(
        `UPDATE workspace_members SET created_at = '2030-01-01T00:00:00Z' WHERE user_id = ANY($1::uuid[])`,
        [[a.id, b.id]],
      );
      // The others joined one after another, a second apart (statements a moment apart can share a
      // timestamp, and then come by email).
      const joined = [t.owner, t.admin, t.member, t.viewer].map((c) => c.principal.userId).concat(gone.id);
      for (const [i, userId] of joined.entries())
        await s.query(
          `UPDATE workspace_members SET created_at = $3::timestamptz WHERE workspace_id = $1 AND user_id = $2`,
          [t.id, userId, new Date(Date.UTC(2029, 0, 1, 0, 0, i)).toISOString()],
        );
      const rows = await s.query<{ user_id: string; role: string; created_at: Date; added_by: string | null }>(
        'SELECT user_id, role, created_at, added_by FROM workspace_members WHERE workspace_id = $1',
        [t.id],
      );
      const users = await s.query<{ id: string; email: string; display_name: string; status: string }>(
        'SELECT id, email, display_name, status FROM users WHERE id = ANY($1::uuid[])',
        [rows.map((r) => r.user_id)],
      );
      const expected = rows
        .map((r) => {
          const u = users.find((x) => x.id === r.user_id)!;
          return {
            workspace_id: t.id,
            user_id: r.user_id,
            email: u.email,
            display_name: u.display_name,
            role: r.role,
            user_status: u.status,
            joined_at: new Date(r.created_at),
            added_by: r.added_by,
          };
        })
        .sort(
          (x, y) =>
            x.joined_at.getTime() - y.joined_at.getTime() || (x.email < y.email ? -1 : x.email > y.email ? 1 : 0),
        );

      const listed = await members.list(t.viewer.access);
      expect(listed).toEqual(expected);
      expect(listed.map((m) => m.user_id)).toEqual([
        t.owner.principal.userId,
        t.admin.principal.userId,
        t.member.principal.userId,
        t.viewer.principal.userId,
        gone.id,
        b.id,
        a.id,
      ]);
      expect(listed.find((m) => m.user_id === gone.id)!.user_status).toBe('deactivated');
    });
  });

  describe('add', () => {
    it('adds an active user by id or by email in any case, noting who added them, audited', async () => {
      const t = await teamIn(s);
      const [a, b] = await Promise.all([s.factory.newUser(), s.factory.newUser()]);
      const byId = await members.add(t.admin.access, { user_id: a.id, role: 'member' }, t.admin.principal);
      const [row] = await s.query<{ created_at: Date }>(
        'SELECT created_at FROM workspace_members WHERE workspace_id = $1 AND user_id = $2',
        [t.id, a.id],
      );
      expect(byId).toEqual({
        workspace_id: t.id,
        user_id: a.id,
        email: a.email,
        display_name: a.email.split('@')[0],
        role: 'member',
        user_status: 'active',
        joined_at: new Date(row.created_at),
        added_by: t.admin.principal.userId,
      });
      const byEmail = await members.add(
        t.admin.access,
        { email: b.email.toUpperCase(), role: 'viewer' },
        t.admin.principal,
      );
      expect(byEmail.user_id).toBe(b.id);
      expect(await membership(a.id, t.id)).toEqual({ role: 'member', added_by: t.admin.principal.userId });
      expect(await membership(b.id, t.id)).toEqual({ role: 'viewer', added_by: t.admin.principal.userId });
      expect(await auditOf('member.added', a.id, t.id)).toEqual([
        { actor_id: t.admin.principal.userId, details: { role: 'member' } },
      ]);
      expect(await auditOf('member.added', b.id, t.id)).toEqual([
        { actor_id: t.admin.principal.userId, details: { role: 'viewer' } },
      ]);
    });

    it('refuses a member already there, a deactivated user, an unknown id or email, writing nothing', async () => {
      const t = await teamIn(s);
      const member = t.member.principal.userId;
      await domainError(
        members.add(t.admin.access, { user_id: member, role: 'viewer' }, t.admin.principal),
        'already_member',
      );
      expect(await roleOf(member, t.id)).toBe('member');
      const gone = await s.factory.newUser({ status: 'deactivated' });
      await domainError(
        members.add(t.admin.access, { user_id: gone.id, role: 'viewer' }, t.admin.principal),
        'user_deactivated',
      );
      expect(await roleOf(gone.id, t.id)).toBeUndefined();
      const unknown = randomUUID();
      await domainError(
        members.add(t.admin.access, { user_id: unknown, role: 'viewer' }, t.admin.principal),
        'not_found',
        {
          resource: 'user',
        },
      );
      await domainError(
        members.add(t.admin.access, { email: 'nobody@nowhere.test', role: 'viewer' }, t.admin.principal),
        'not_found',
        { resource: 'user' },
      );
      expect(await auditOf('member.added', gone.id, t.id)).toEqual([]);
      expect(await auditOf('member.added', member, t.id)).toEqual([]);
    });

    it('needs exactly one of user_id and email', async () => {
      const t = await teamIn(s);
      const u = await s.factory.newUser();
      const expected = { errors: [{ field: 'user_id', message: 'give exactly one of user_id or email' }] };
      await domainError(
        members.add(t.admin.access, { role: 'viewer' }, t.admin.principal),
        'validation_failed',
        expected,
      );
      await domainError(
        members.add(t.admin.access, { user_id: u.id, email: u.email, role: 'viewer' }, t.admin.principal),
        'validation_failed',
        expected,
      );
      expect(await roleOf(u.id, t.id)).toBeUndefined();
    });

    it('lets only owners grant the owner role, a system admin who is not a member included', async () => {
      const t = await teamIn(s);
      const [c, d] = await Promise.all([s.factory.newUser(), s.factory.newUser()]);
      await domainError(
        members.add(t.admin.access, { user_id: c.id, role: 'owner' }, t.admin.principal),
        'owner_role_required',
      );
      expect(await roleOf(c.id, t.id)).toBeUndefined();
      expect((await members.add(t.owner.access, { user_id: c.id, role: 'owner' }, t.owner.principal)).role).toBe(
        'owner',
      );
      expect(await roleOf(c.id, t.id)).toBe('owner');
      const sysadmin = await sysadminIn(s, t.id);
      const added = await members.add(sysadmin.access, { user_id: d.id, role: 'owner' }, sysadmin.principal);
      expect([added.role, added.added_by]).toEqual(['owner', sysadmin.principal.userId]);
      expect(await membership(d.id, t.id)).toEqual({ role: 'owner', added_by: sysadmin.principal.userId });
    });
  });

  describe('changeRole', () => {
    it('changes a role, persisted and audited; the same role again records nothing', async () => {
      const t = await teamIn(s);
      const u = await s.factory.newUser();
      await s.factory.addMember(t.id, u.id, 'viewer');
      const changed = await members.changeRole(t.admin.access, u.id, 'admin', t.admin.principal);
      expect(changed).toEqual(expect.objectContaining({ workspace_id: t.id, user_id: u.id, role: 'admin' }));
      expect(await roleOf(u.id, t.id)).toBe('admin');
      await members.changeRole(t.admin.access, u.id, 'member', t.admin.principal);
      const again = await members.changeRole(t.admin.access, u.id, 'member', t.admin.principal);
      expect(again.role).toBe('member');
      expect(await roleOf(u.id, t.id)).toBe('member');
      expect((await auditOf('member.role_changed', u.id, t.id)).map((a) => [a.actor_id, a.details])).toEqual([
        [t.admin.principal.userId, { from: 'viewer', to: 'admin' }],
        [t.admin.principal.userId, { from: 'admin', to: 'member' }],
      ]);
    });

    it('lets only owners promote to owner or change the role of an owner', async () => {
      const t = await teamIn(s);
      const u = await s.factory.newUser();
      await s.factory.addMember(t.id, u.id, 'member');
      const admin = t.admin.principal.userId;
      const owner = t.owner.principal.userId;
      await domainError(members.changeRole(t.admin.access, u.id, 'owner', t.admin.principal), 'owner_role_required');
      await domainError(members.changeRole(t.admin.access, admin, 'owner', t.admin.principal), 'owner_role_required');
      await domainError(members.changeRole(t.admin.access, owner, 'viewer', t.admin.principal), 'owner_role_required');
      expect([await roleOf(u.id, t.id), await roleOf(admin, t.id), await roleOf(owner, t.id)]).toEqual([
        'member',
        'admin',
        'owner',
      ]);
      expect(await auditOf('member.role_changed', owner, t.id)).toEqual([]);
      await members.changeRole(t.owner.access, u.id, 'owner', t.owner.principal);
      expect(await roleOf(u.id, t.id)).toBe('owner');
      await members.changeRole(t.owner.access, u.id, 'viewer', t.owner.principal);
      expect(await roleOf(u.id, t.id)).toBe('viewer');
    });

    it('never demotes the last owner, not even for a system admin; a second owner makes it possible', async () => {
      const c = await solo();
      const me = c.principal.userId;
      await domainError(members.changeRole(c.access, me, 'admin', c.principal), 'last_owner');
      const sysadmin = await sysadminIn(s, c.workspaceId);
      await domainError(members.changeRole(sysadmin.access, me, 'viewer', sysadmin.principal), 'last_owner');
      expect(await roleOf(me, c.workspaceId)).toBe('owner');
      const co = await s.factory.newUser();
      await members.add(c.access, { user_id: co.id, role: 'owner' }, c.principal);
      await members.changeRole(c.access, me, 'admin', c.principal);
      expect(await roleOf(me, c.workspaceId)).toBe('admin');
      expect(await auditOf('member.role_changed', me, c.workspaceId)).toEqual([
        { actor_id: me, details: { from: 'owner', to: 'admin' } },
      ]);
      // The former owner is an admin now: the co-owner, the last owner, stays one.
      await domainError(
        members.changeRole({ ...c.access, role: 'admin' }, co.id, 'admin', c.principal),
        'owner_role_required',
      );
      // Nor does an owner's access read before the demotion still count.
      const stale = await domainError(members.changeRole(c.access, co.id, 'admin', c.principal), 'owner_role_required');
      expect(stale.message).toContain('no longer an owner');
      expect(await owners(c.workspaceId)).toEqual([co.id]);
    });

    it('answers not_found for a user who is no member here, a member of another workspace included', async () => {
      const t = await teamIn(s);
      const elsewhere = await solo();
      await domainError(
        members.changeRole(t.admin.access, elsewhere.principal.userId, 'viewer', t.admin.principal),
        'not_found',
        { resource: 'member' },
      );
      await domainError(members.changeRole(t.admin.access, randomUUID(), 'viewer', t.admin.principal), 'not_found', {
        resource: 'member',
      });
      await domainError(
        members.changeRole(t.owner.access, elsewhere.principal.userId, 'viewer', t.owner.principal),
        'not_found',
      );
      expect(await roleOf(elsewhere.principal.userId, elsewhere.workspaceId)).toBe('owner');
    });
  });

  describe('remove', () => {
    it("an admin removes a member: the row goes, audited, and the member's API keys there are revoked", async () => {
      const t = await teamIn(s);
      const other = await solo();
      const u = await s.factory.newUser();
      await s.factory.addMember(t.id, u.id, 'member');
      await s.factory.addMember(other.workspaceId, u.id, 'member');
      const keys = s.get(ApiKeysService);
      const here = await keys.create(
        callerAs(u, t.id, 'member').access,
        { name: 'ci', role: 'member' },
        principalOf(u),
      );
      const there = await keys.create(
        callerAs(u, other.workspaceId, 'member').access,
        { name: 'ci', role: 'viewer' },
        principalOf(u),
      );

      await members.remove(t.admin.access, u.id, t.admin.principal);
      expect(await roleOf(u.id, t.id)).toBeUndefined();
      expect(await roleOf(u.id, other.workspaceId)).toBe('member');
      expect(await auditOf('member.removed', u.id, t.id)).toEqual([
        { actor_id: t.admin.principal.userId, details: { role: 'member', left: false } },
      ]);
      const states = await s.query<{ id: string; revoked: boolean; revoked_reason: string | null }>(
        'SELECT id, revoked_at IS NOT NULL AS revoked, revoked_reason FROM api_keys WHERE user_id = $1 ORDER BY id',
        [u.id],
      );
      expect(states).toEqual(
        [
          { id: here.id, revoked: true, revoked_reason: 'member_removed' },
          { id: there.id, revoked: false, revoked_reason: null },
        ].sort((x, y) => (x.id < y.id ? -1 : 1)),
      );
      expect(await auditOf('api_key.revoked', here.id, t.id)).toEqual([
        {
          actor_id: t.admin.principal.userId,
          details: { name: 'ci', prefix: expect.stringMatching(/^ews_/), reason: 'member_removed' },
        },
      ]);
    });

    it('lets any member leave, audited as leaving', async () => {
      const t = await teamIn(s);
      const viewer = t.viewer.principal.userId;
      await members.remove(t.viewer.access, viewer, t.viewer.principal);
      expect(await roleOf(viewer, t.id)).toBeUndefined();
      expect(await auditOf('member.removed', viewer, t.id)).toEqual([
        { actor_id: viewer, details: { role: 'viewer', left: true } },
      ]);
    });

    it('keeps viewers and members from removing others and admins from removing owners; owners remove co-owners', async () => {
      const t = await teamIn(s);
      const [member, viewer, owner] = [t.member, t.viewer, t.owner].map((c) => c.principal.userId);
      await domainError(members.remove(t.viewer.access, member, t.viewer.principal), 'forbidden');
      await domainError(members.remove(t.member.access, viewer, t.member.principal), 'forbidden');
      await domainError(members.remove(t.admin.access, owner, t.admin.principal), 'owner_role_required');
      expect([await roleOf(member, t.id), await roleOf(viewer, t.id), await roleOf(owner, t.id)]).toEqual([
        'member',
        'viewer',
        'owner',
      ]);

      const co = await s.factory.newUser();
      await s.factory.addMember(t.id, co.id, 'owner');
      await members.remove(t.owner.access, co.id, t.owner.principal);
      expect(await roleOf(co.id, t.id)).toBeUndefined();
      const otherAdmin = await s.factory.newUser();
      await s.factory.addMember(t.id, otherAdmin.id, 'admin');
      await members.remove(t.admin.access, otherAdmin.id, t.admin.principal);
      expect(await roleOf(otherAdmin.id, t.id)).toBeUndefined();
      expect(await auditOf('member.removed', owner, t.id)).toEqual([]);
    });

    it('never removes the last owner, not when they leave nor for a system admin; a co-owner makes leaving possible', async () => {
      const c = await solo();
      const me = c.principal.userId;
      await domainError(members.remove(c.access, me, c.principal), 'last_owner');
      const sysadmin = await sysadminIn(s, c.workspaceId);
      await domainError(members.remove(sysadmin.access, me, sysadmin.principal), 'last_owner');
      expect(await roleOf(me, c.workspaceId)).toBe('owner');
      const co = await s.factory.newUser();
      await s.factory.addMember(c.workspaceId, co.id, 'owner');
      await members.remove(c.access, me, c.principal);
      expect(await owners(c.workspaceId)).toEqual([co.id]);
      expect(await auditOf('member.removed', me, c.workspaceId)).toEqual([
        { actor_id: me, details: { role: 'owner', left: true } },
      ]);
    });

    it('answers not_found for a user who is no member here', async () => {
      const t = await teamIn(s);
      const elsewhere = await solo();
      await domainError(members.remove(t.admin.access, elsewhere.principal.userId, t.admin.principal), 'not_found', {
        resource: 'member',
      });
      await domainError(members.remove(t.owner.access, randomUUID(), t.owner.principal), 'not_found');
      expect(await roleOf(elsewhere.principal.userId, elsewhere.workspaceId)).toBe('owner');
    });
  });

  describe('createUser', () => {
    const userRow = async (email: string) =>
      (
        await s.query<{ id: string; system_role: string; has_password: boolean; display_name: string }>(
          'SELECT id, system_role, password_hash IS NOT NULL AS has_password, display_name FROM users WHERE email = $1',
          [email],
        )
      )[0];

    it('creates a user with a password straight into the workspace, as a plain user, audited', async () => {
      const t = await teamIn(s);
      const created = await members.createUser(
        t.admin.access,
        { email: 'Direct@Medium.test', display_name: 'Direct', password: 'direct-pass-1', role: 'member' },
        t.admin.principal,
      );
      const user = await userRow('direct@medium.test');
      expect(user).toEqual({ id: created.user_id, system_role: 'user', has_password: true, display_name: 'Direct' });
      expect(created).toEqual({
        workspace_id: t.id,
        user_id: user.id,
        email: 'direct@medium.test',
        display_name: 'Direct',
        role: 'member',
        user_status: 'active',
        joined_at: expect.any(Date),
        added_by: t.admin.principal.userId,
      });
      expect(await membership(user.id, t.id)).toEqual({ role: 'member', added_by: t.admin.principal.userId });
      expect(await auditOf('workspace.user_created', user.id, t.id)).toEqual([
        { actor_id: t.admin.principal.userId, details: { role: 'member' } },
      ]);
      expect(await s.query('SELECT 1 FROM password_reset_tokens WHERE user_id = $1', [user.id])).toEqual([]);
    });

    it('without a password hands back a one-time reset token, stored hashed, and the user has no password', async () => {
      const t = await teamIn(s);
      const before = Date.now();
      const created = await members.createUser(
        t.admin.access,
        { email: 'nopass@medium.test', display_name: 'No Pass', role: 'viewer' },
        t.admin.principal,
      );
      expect(created.reset_token).toMatch(/^rst_/);
      const ttl = s.config.env.RESET_TOKEN_TTL_MINUTES * 60_000;
      const expiresAt = created.reset_token_expires_at!.getTime();
      expect(expiresAt).toBeGreaterThanOrEqual(before + ttl);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + ttl);
      const user = await userRow('nopass@medium.test');
      expect(user.has_password).toBe(false);
      expect(
        await s.query(
          'SELECT token_hash, created_by, expires_at, used_at FROM password_reset_tokens WHERE user_id = $1',
          [user.id],
        ),
      ).toEqual([
        {
          token_hash: hashSecretToken(created.reset_token!),
          created_by: t.admin.principal.userId,
          expires_at: new Date(expiresAt),
          used_at: null,
        },
      ]);
      // The listing never carries the token.
      const listed = (await members.list(t.viewer.access)).find((m) => m.user_id === user.id)!;
      expect(listed).not.toHaveProperty('reset_token');
      expect(listed).not.toHaveProperty('reset_token_expires_at');
    });

    it('lets only an owner create an owner: an admin asking writes no user', async () => {
      const t = await teamIn(s);
      await domainError(
        members.createUser(
          t.admin.access,
          { email: 'own@medium.test', display_name: 'x', role: 'owner' },
          t.admin.principal,
        ),
        'owner_role_required',
      );
      expect(await userRow('own@medium.test')).toBeUndefined();
      const created = await members.createUser(
        t.owner.access,
        { email: 'co-owner@medium.test', display_name: 'Co', password: 'co-owner-pass', role: 'owner' },
        t.owner.principal,
      );
      expect(await roleOf(created.user_id, t.id)).toBe('owner');
    });

    it('refuses a registered email in any case (email_taken, pointing at adding the member), writing nothing', async () => {
      const t = await teamIn(s);
      const registered = await s.factory.newUser();
      const err = await domainError(
        members.createUser(
          t.admin.access,
          { email: registered.email.toUpperCase(), display_name: 'x', role: 'viewer' },
          t.admin.principal,
        ),
        'email_taken',
      );
      expect(err.message).toBe(
        `${registered.email} is already registered; add the existing user with POST /workspaces/${t.id}/members instead`,
      );
      expect(await roleOf(registered.id, t.id)).toBeUndefined();
      expect(await s.query('SELECT 1 FROM users WHERE lower(email) = $1', [registered.email])).toHaveLength(1);
    });
  });

  describe('candidates', () => {
    /** The query as a request without `limit` makes it (the DTO's default). */
    const query = (fields: Partial<UserCandidatesQuery>) => Object.assign(new UserCandidatesQuery(), fields);

    it('answers active non-members whose email or display name contains q, in any case, taking q literally', async () => {
      const t = await teamIn(s);
      const a = await s.factory.newUser({ email: 'cand-one@cands.test' });
      await s.factory.newUser({ email: 'cand-two@cands.test', status: 'deactivated' });
      const member = await s.factory.newUser({ email: 'cand-three@cands.test' });
      await s.factory.addMember(t.id, member.id, 'viewer');
      expect(await members.candidates(t.admin.access, query({ q: 'CANDS.TEST' }))).toEqual([
        { id: a.id, email: 'cand-one@cands.test', display_name: 'cand-one' },
      ]);
      await s.query(`UPDATE users SET display_name = 'Zelda Quartermaine' WHERE id = $1`, [a.id]);
      expect(await members.candidates(t.admin.access, query({ q: 'quarter' }))).toEqual([
        { id: a.id, email: 'cand-one@cands.test', display_name: 'Zelda Quartermaine' },
      ]);
      expect(await members.candidates(t.admin.access, query({ q: '%' }))).toEqual([]);
      expect(await members.candidates(t.admin.access, query({ q: '_and-one' }))).toEqual([]);
      const viewerEmail = t.viewer.principal.email;
      expect(await members.candidates(t.admin.access, query({ q: viewerEmail }))).toEqual([]);
      // A member of another workspace is a candidate here.
      const elsewhere = await solo();
      expect(await members.candidates(t.admin.access, query({ q: elsewhere.principal.email }))).toEqual([
        {
          id: elsewhere.principal.userId,
          email: elsewhere.principal.email,
          display_name: elsewhere.principal.email.split('@')[0],
        },
      ]);
    });

    it('answers at most limit candidates (20 by default), by email', async () => {
      const t = await teamIn(s);
      const emails = Array.from({ length: 22 }, (_, i) => `bulk-${String(i).padStart(2, '0')}@bulk.test`);
      for (const email of [...emails].reverse()) await s.factory.newUser({ email });
      const byDefault = await members.candidates(t.admin.access, query({ q: 'bulk.test' }));
      expect(byDefault.map((c) => c.email)).toEqual(emails.slice(0, 20));
      expect(
        (await members.candidates(t.admin.access, query({ q: 'BULK.test', limit: 50 }))).map((c) => c.email),
      ).toEqual(emails);
      expect(await members.candidates(t.admin.access, query({ limit: 1 }))).toHaveLength(1);
    });
  });

  describe('two owners acting on each other at once', () => {
    it('leave exactly one owner, the other call refused, never a deadlock', async () => {
      for (const attempt of ['demote', 'remove'] as const) {
        for (let round = 0; round < 5; round++) {
          const a = await solo();
          const bUser = await s.factory.newUser();
          await s.factory.addMember(a.workspaceId, bUser.id, 'owner');
          const b = callerAs(bUser, a.workspaceId, 'owner');
          const act = (by: Caller, target: Caller) =>
            attempt === 'demote'
              ? members.changeRole(by.access, target.principal.userId, 'admin', by.principal)
              : members.remove(by.access, target.principal.userId, by.principal);
          const results = await Promise.allSettled([act(a, b), act(b, a)]);
          expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
          const [failure] = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
          expect(['owner_role_required', 'last_owner']).toContain((failure.reason as { code: string }).code);
          expect(await owners(a.workspaceId)).toHaveLength(1);
        }
      }
    });
  });

  describe('addOrUpgradeMember (an accepted invitation)', () => {
    it('adds a membership, raises a lower role, never lowers a higher one', async () => {
      const c = await solo();
      const id = c.workspaceId;
      const u = await s.factory.newUser();
      const actor = { userId: c.principal.userId, email: c.principal.email };

      expect(await members.addOrUpgradeMember(id, u.id, 'viewer', actor)).toBe('viewer');
      expect(await membership(u.id, id)).toEqual({ role: 'viewer', added_by: c.principal.userId });
      expect(await auditOf('member.added', u.id, id)).toEqual([
        { actor_id: c.principal.userId, details: { role: 'viewer', via: 'invitation' } },
      ]);

      expect(await members.addOrUpgradeMember(id, u.id, 'admin', actor)).toBe('admin');
      expect(await roleOf(u.id, id)).toBe('admin');
      expect(await members.addOrUpgradeMember(id, u.id, 'member', actor)).toBe('admin');
      expect(await members.addOrUpgradeMember(id, u.id, 'admin', actor)).toBe('admin');
      expect(await roleOf(u.id, id)).toBe('admin');
      expect(await auditOf('member.role_changed', u.id, id)).toEqual([
        { actor_id: c.principal.userId, details: { from: 'viewer', to: 'admin', via: 'invitation' } },
      ]);
    });

    it("joins the caller's transaction: a rollback leaves no membership", async () => {
      const c = await solo();
      const u = await s.factory.newUser();
      await expect(
        s.get(TransactionRunner).run(async () => {
          await members.addOrUpgradeMember(c.workspaceId, u.id, 'member', {
            userId: c.principal.userId,
            email: c.principal.email,
          });
          throw new Error('invitation failed later');
        }),
      ).rejects.toThrow('invitation failed later');
      expect(await roleOf(u.id, c.workspaceId)).toBeUndefined();
      expect(await auditOf('member.added', u.id, c.workspaceId)).toEqual([]);
    });

    it('two concurrent acceptances for the same user end with one membership at the higher role', async () => {
      const c = await solo();
      const u = await s.factory.newUser();
      const results = await Promise.all([
        members.addOrUpgradeMember(c.workspaceId, u.id, 'member', undefined),
        members.addOrUpgradeMember(c.workspaceId, u.id, 'admin', undefined),
      ]);
      expect(results).toContain('admin');
      expect(
        await s.query('SELECT role, added_by FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [
          c.workspaceId,
          u.id,
        ]),
      ).toEqual([{ role: 'admin', added_by: null }]);
    });
  });
});
