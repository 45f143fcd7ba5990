import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { Db } from '#libs/database/unit-of-work.js';

// The window (or lock) of the existing row is over: this attempt starts a new one.
const FRESH = `(t.locked_until <= now() OR (t.locked_until IS NULL AND t.window_started_at <= now() - make_interval(secs => $3)))`;
// The key is locked, or this attempt would be one past the limit: refused, and not counted.
const REFUSED = `(t.locked_until IS NOT NULL OR t.failures >= $2)`;

/**
 * Failed-login counters, kept in the database so every API process shares them. `failures`
 * counts the attempts of the window that were let through to a password check (failed, or
 * still being checked); a success deletes the row.
 */
@Injectable()
export class LoginThrottleRepository {
  constructor(private readonly db: Db) {}

  /**
   * Counts an attempt before its password is checked, in one statement (the row lock orders
   * concurrent attempts, so none is lost): the first `max` of a window go through; any later one
   * is refused and locks the key for `lockSeconds` from then. Returns the seconds the key stays
   * locked: 0 means go ahead and check the password. At most `lockSeconds`: now() is each
   * transaction's start, and an attempt that began just before the one that set the lock (it
   * waited for the row) would otherwise count a second more than the lock lasts. Kept as SQL text:
   * its CASE arms are the throttle's rule, clearer read side by side than as builder expressions.
   */
  async beginAttempt(key: string, max: number, lockSeconds: number): Promise<number> {
    const rows: Array<{ locked_seconds: number }> = await this.db.query(
      `INSERT INTO login_throttle AS t (key, failures, window_started_at) VALUES ($1, 1, now())
       ON CONFLICT (key) DO UPDATE SET
         failures = CASE WHEN ${FRESH} THEN 1 WHEN ${REFUSED} THEN t.failures ELSE t.failures + 1 END,
         window_started_at = CASE WHEN ${FRESH} THEN now() ELSE t.window_started_at END,
         locked_until = CASE WHEN ${FRESH} THEN NULL
                             WHEN ${REFUSED} THEN coalesce(t.locked_until, now() + make_interval(secs => $3))
                             ELSE NULL END
       RETURNING CASE WHEN t.locked_until > now() THEN least($3, greatest(1, ceil(extract(epoch FROM t.locked_until - now()))))::int ELSE 0 END AS locked_seconds`,
      [key, max, lockSeconds],
    );
    return rows[0].locked_seconds;
  }

  /**
   * Takes back an attempt that was let through but never judged (the password check was refused
   * for load); the lock goes too when the count falls below `max` again.
   */
  async refundAttempt(key: string, max: number): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('login_throttle')
        .set((eb) => ({
          failures: eb.fn<number>('greatest', [eb('failures', '-', eb.lit(1)), eb.lit(0)]),
          locked_until: eb
            .case()
            .when(eb('failures', '-', eb.lit(1)), '<', max)
            .then(sql<Date | null>`NULL`)
            .else(eb.ref('locked_until'))
            .end(),
        }))
        .where('key', '=', key)
        .where('failures', '>', 0),
    );
  }

  async clear(key: string): Promise<void> {
    await this.db.typedWrite((q) => q.deleteFrom('login_throttle').where('key', '=', key));
  }
}
