import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { Db } from '#libs/database/unit-of-work.js';
import { AccessCache } from './access-cache.js';

/** Bearer-token sessions: one row per issued token, so logout and deactivation revoke at once. */
@Injectable()
export class SessionRepository {
  constructor(
    private readonly db: Db,
    private readonly cache: AccessCache,
  ) {}

  async create(session: {
    id: string;
    userId: string;
    expiresAt: Date;
    userAgent?: string;
    ip?: string;
  }): Promise<void> {
    await this.db.typedWrite((q) =>
      q.insertInto('auth_tokens').values({
        id: session.id,
        user_id: session.userId,
        expires_at: session.expiresAt,
        user_agent: session.userAgent?.slice(0, 512) ?? null,
        ip: session.ip ?? null,
      }),
    );
  }

  async revoke(tokenId: string, reason: string): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('auth_tokens')
        .set({ revoked_at: sql`now()`, revoked_reason: reason })
        .where('id', '=', tokenId)
        .where('revoked_at', 'is', null),
    );
    this.cache.changed({ token: tokenId });
  }

  /** Revokes every live token of the user; returns how many. */
  async revokeAllOf(userId: string, reason: string): Promise<number> {
    const revoked = await this.db.typed((q) =>
      q
        .updateTable('auth_tokens')
        .set({ revoked_at: sql`now()`, revoked_reason: reason })
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .returning('id'),
    );
    this.cache.changed({ user: userId });
    return revoked.length;
  }
}
