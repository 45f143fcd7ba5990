import { Injectable } from '@nestjs/common';
import { Db } from '../database/unit-of-work.js';
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
    await this.db.query(
      'INSERT INTO auth_tokens (id, user_id, expires_at, user_agent, ip) VALUES ($1, $2, $3, $4, $5)',
      [session.id, session.userId, session.expiresAt, session.userAgent?.slice(0, 512) ?? null, session.ip ?? null],
    );
  }

  async revoke(tokenId: string, reason: string): Promise<void> {
    await this.db.query(
      'UPDATE auth_tokens SET revoked_at = now(), revoked_reason = $2 WHERE id = $1 AND revoked_at IS NULL',
      [tokenId, reason],
    );
    this.cache.changed({ token: tokenId });
  }

  /** Revokes every live token of the user; returns how many. */
  async revokeAllOf(userId: string, reason: string): Promise<number> {
    // A raw UPDATE answers [rows, affected] through TypeORM's postgres driver.
    const [, affected]: [unknown[], number] = await this.db.query(
      'UPDATE auth_tokens SET revoked_at = now(), revoked_reason = $2 WHERE user_id = $1 AND revoked_at IS NULL',
      [userId, reason],
    );
    this.cache.changed({ user: userId });
    return affected;
  }
}
