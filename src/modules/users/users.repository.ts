import { Injectable } from '@nestjs/common';
import { sql, type Selectable } from 'kysely';
import { AccessCache } from '#libs/auth/access-cache.js';
import type { Users } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';
import { PasswordResetTokenEntity } from './entities/password-reset-token.entity.js';
import { UserEntity } from './entities/user.entity.js';
import { containsPattern } from '#libs/database/like.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';
import { countOf, entityColumns, entityList, entityPage, sameText, sorted } from '#libs/database/typed-fragments.js';
import type { QueryBuilder } from '#libs/database/typed-queries.js';

/** What the user list sorts by: display names case-insensitively. */
export type UserSort = 'created_at' | 'email' | 'display_name';

/** The user of this e-mail, compared case-insensitively. */
function byEmail(q: QueryBuilder, email: string) {
  return q.selectFrom('users').where((eb) => sameText(eb, 'email', email));
}

@Injectable()
export class UsersRepository {
  constructor(
    private readonly db: Db,
    private readonly access: AccessCache,
  ) {}

  private get users() {
    return this.db.repository(UserEntity);
  }

  private get resetTokens() {
    return this.db.repository(PasswordResetTokenEntity);
  }

  findById(id: string): Promise<UserEntity | null> {
    return this.users.findOne({ where: { id } });
  }

  /** With the password hash, for login. */
  async findByEmailWithPassword(email: string): Promise<UserEntity | null> {
    const [row] = await this.db.typed((q) => byEmail(q, email).selectAll());
    if (!row) return null;
    const [user] = entitiesFrom(this.users, [row]);
    // Not selected by default (`select: false`), so entitiesFrom leaves it unset.
    user.passwordHash = row.password_hash;
    return user;
  }

  /** Without the password hash. */
  async findByEmail(email: string): Promise<UserEntity | null> {
    const rows = await this.db.typed((q) => byEmail(q, email).select(entityColumns(this.users, 'users')));
    return entitiesFrom(this.users, rows)[0] ?? null;
  }

  findByIds(ids: string[]): Promise<UserEntity[]> {
    if (!ids.length) return Promise.resolve([]);
    return entityList(
      this.db,
      this.users,
      (q) => q.selectFrom('users').where('id', 'in', ids),
      (query) => query,
    );
  }

  /** Active users outside `excluded` whose email or name contains q, by email, at most `limit`. */
  candidates(
    excluded: string[],
    q: string | undefined,
    limit: number,
  ): Promise<Array<Pick<Selectable<Users>, 'id' | 'email' | 'display_name'>>> {
    const pattern = q ? containsPattern(q.toLowerCase()) : '%';
    return this.db.typed((b) =>
      b
        .selectFrom('users')
        .select(['id', 'email', 'display_name'])
        .where('status', '=', 'active')
        .where((eb) =>
          eb.and([
            eb.not(eb('id', '=', sql<string>`ANY(${excluded}::uuid[])`)),
            eb.or([
              eb(eb.fn('lower', ['email']), 'like', pattern),
              eb(eb.fn('lower', ['display_name']), 'like', pattern),
            ]),
          ]),
        )
        .orderBy('email')
        .limit(limit),
    );
  }

  findByIdForUpdate(id: string): Promise<UserEntity | null> {
    return this.users.findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  /** The user signed in through SSO as this issuer's subject, its row locked, or null. */
  findBySsoIdentityForUpdate(issuer: string, subject: string): Promise<UserEntity | null> {
    return this.users.findOne({
      where: { ssoIssuer: issuer, ssoSubject: subject },
      lock: { mode: 'pessimistic_write' },
    });
  }

  async setSsoIdentity(id: string, issuer: string, subject: string): Promise<void> {
    await this.users.update({ id }, { ssoIssuer: issuer, ssoSubject: subject });
  }

  /** Ids of the active system admins, locked so two concurrent demotions cannot both pass. */
  async lockActiveAdmins(): Promise<string[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('users')
        .select('id')
        .where('system_role', '=', 'admin')
        .where('status', '=', 'active')
        .orderBy('id')
        .forUpdate(),
    );
    return rows.map((r) => r.id);
  }

  async list(
    filter: { q?: string; status?: string; systemRole?: string },
    sort: { column: UserSort; direction: 'ASC' | 'DESC' },
    window: { skip: number; take: number },
  ): Promise<[UserEntity[], number]> {
    const { q: text, status, systemRole } = filter;
    return entityPage(
      this.db,
      this.users,
      (q) => {
        let query = q.selectFrom('users');
        if (text) {
          const pattern = containsPattern(text.toLowerCase());
          query = query.where((eb) =>
            eb.or([
              eb(eb.fn('lower', ['email']), 'like', pattern),
              eb(eb.fn('lower', ['display_name']), 'like', pattern),
            ]),
          );
        }
        if (status) query = query.where('status', '=', status);
        if (systemRole) query = query.where('system_role', '=', systemRole);
        return query;
      },
      (query) => sorted(query, { ...sort, lower: sort.column === 'display_name' }, 'id'),
      window,
    );
  }

  /** Saves a changed user; every process drops its cached sessions and memberships of them. */
  async save(user: UserEntity): Promise<UserEntity> {
    const saved = await this.users.save(user);
    this.access.changed({ user: user.id });
    return saved;
  }

  /** Marks every unused reset token of the user used, so only the newest one works. */
  async invalidateResetTokens(userId: string): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('password_reset_tokens')
        .set({ used_at: sql`now()` })
        .where('user_id', '=', userId)
        .where('used_at', 'is', null),
    );
  }

  count(): Promise<number> {
    return countOf(this.db, (q) => q.selectFrom('users'));
  }

  async create(user: Pick<UserEntity, 'email' | 'displayName' | 'passwordHash' | 'systemRole'>): Promise<UserEntity> {
    const repo = this.users;
    const saved = await repo.save(
      repo.create({
        ...user,
        email: user.email.toLowerCase(),
        status: 'active',
        passwordChangedAt: user.passwordHash ? new Date() : null,
      }),
    );
    return (await repo.findOne({ where: { id: saved.id } }))!;
  }

  async markLogin(id: string): Promise<void> {
    await this.users.update({ id }, { lastLoginAt: () => 'now()' } as never);
  }

  async setPassword(id: string, passwordHash: string): Promise<void> {
    await this.users.update({ id }, { passwordHash, passwordChangedAt: new Date() });
  }

  async createResetToken(
    token: Pick<PasswordResetTokenEntity, 'userId' | 'tokenHash' | 'expiresAt' | 'createdBy'>,
  ): Promise<PasswordResetTokenEntity> {
    const repo = this.resetTokens;
    return repo.save(repo.create(token));
  }

  /** Marks a live reset token used and returns its user id; null when unknown, used or expired. */
  async consumeResetToken(tokenHash: string): Promise<string | null> {
    const rows = await this.db.typed((q) =>
      q
        .updateTable('password_reset_tokens')
        .set({ used_at: sql`now()` })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', sql<Date>`now()`)
        .returning('user_id'),
    );
    return rows[0]?.user_id ?? null;
  }
}
