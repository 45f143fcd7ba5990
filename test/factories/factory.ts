import { AccessCache } from '#libs/auth/access-cache.js';
import argon2 from 'argon2';
import { randomBytes } from 'node:crypto';
import type supertest from 'supertest';
import type { DataSource } from 'typeorm';
import type { WorkspaceRole } from '#libs/auth/roles.js';

export const DEFAULT_PASSWORD = 'correct-horse-battery';

export interface TestUser {
  id: string;
  email: string;
  password: string;
  systemRole: 'admin' | 'user';
}

export interface Actor extends TestUser {
  token: string;
  /** `{ Authorization: 'Bearer …' }` for supertest's .set() */
  auth: { Authorization: string };
}

/**
 * Builders for test records (Immich's `ctx.newUser()` style). Users and memberships are
 * written straight to the database so setup is fast; tokens come from the real login.
 */
export class Factory {
  constructor(
    /** The app's HTTP server, for logins; none in the medium tier, which has no HTTP. */
    private readonly http: ReturnType<typeof supertest> | undefined,
    private readonly dataSource: DataSource,
    /** The app's hashing cost (PASSWORD_HASH_*), so a login verifies at the cost the app would have hashed at. */
    private readonly hashing: { memoryCost: number; timeCost: number; parallelism: number },
    /**
     * The app's access cache: memberships written here go behind the service's back, so the
     * factory tells the cache itself, as the members repository would (on PostgreSQL the
     * database's trigger would tell it too, a moment later).
     */
    private readonly access: AccessCache,
  ) {}

  private defaultHash?: Promise<string>;

  private hash(password: string): Promise<string> {
    return argon2.hash(password, { type: argon2.argon2id, ...this.hashing });
  }

  async newUser(
    options: {
      systemRole?: 'admin' | 'user';
      email?: string;
      password?: string;
      status?: 'active' | 'deactivated';
    } = {},
  ): Promise<TestUser> {
    const email = options.email ?? `user-${randomBytes(5).toString('hex')}@test.local`;
    const password = options.password ?? DEFAULT_PASSWORD;
    const hash =
      password === DEFAULT_PASSWORD
        ? await (this.defaultHash ??= this.hash(DEFAULT_PASSWORD))
        : await this.hash(password);
    const [row] = await this.dataSource.query(
      `INSERT INTO users (email, display_name, password_hash, system_role, status) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [email, email.split('@')[0], hash, options.systemRole ?? 'user', options.status ?? 'active'],
    );
    return { id: row.id, email, password, systemRole: options.systemRole ?? 'user' };
  }

  /** Logs in as a well-behaved client: a 429 auth_busy (a burst of logins) is retried after Retry-After. */
  async login(user: Pick<TestUser, 'email' | 'password'>): Promise<string> {
    const http = this.http;
    if (!http) throw new Error('login needs the HTTP server: a medium test calls the services with a Caller instead');
    for (let attempt = 1; ; attempt++) {
      const res = await http.post('/auth/token').send({ email: user.email, password: user.password });
      if (res.status === 200) return res.body.access_token;
      if (res.status !== 429 || res.body.error_code !== 'auth_busy' || attempt >= 60) {
        throw new Error(`login of ${user.email} failed: ${res.status} ${JSON.stringify(res.body)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, Number(res.headers['retry-after']) * 1000));
    }
  }

  /** A user with a live token. */
  async actor(options: { systemRole?: 'admin' | 'user' } = {}): Promise<Actor> {
    const user = await this.newUser(options);
    const token = await this.login(user);
    return { ...user, token, auth: { Authorization: `Bearer ${token}` } };
  }

  async newWorkspace(
    owner: Pick<TestUser, 'id'>,
    name = `ws-${randomBytes(3).toString('hex')}`,
  ): Promise<{ id: string; name: string }> {
    const [row] = await this.dataSource.query(
      `INSERT INTO workspaces (name, created_by) VALUES ($1, $2) RETURNING id`,
      [name, owner.id],
    );
    await this.addMember(row.id, owner.id, 'owner');
    return { id: row.id, name };
  }

  async addMember(workspaceId: string, userId: string, role: WorkspaceRole): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
      [workspaceId, userId, role],
    );
    this.access.forget({ member: { workspace: workspaceId, user: userId } });
  }

  /** A workspace with one actor per role: owner, admin, member, viewer, and an outsider. */
  async workspaceWithRoles(): Promise<
    { workspace: { id: string; name: string } } & Record<WorkspaceRole | 'outsider', Actor>
  > {
    const [owner, admin, member, viewer, outsider] = await Promise.all([
      this.actor(),
      this.actor(),
      this.actor(),
      this.actor(),
      this.actor(),
    ]);
    const workspace = await this.newWorkspace(owner);
    await this.addMember(workspace.id, admin.id, 'admin');
    await this.addMember(workspace.id, member.id, 'member');
    await this.addMember(workspace.id, viewer.id, 'viewer');
    return { workspace, owner, admin, member, viewer, outsider };
  }
}
