import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** Failed-login counters, kept in the database so every API process shares them. */
@Injectable()
export class LoginThrottleRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Seconds the key stays locked; 0 when it is not locked. */
  async lockedFor(key: string): Promise<number> {
    const rows: Array<{ seconds: number }> = await this.dataSource.query(
      `SELECT ceil(extract(epoch FROM locked_until - now()))::int AS seconds
         FROM login_throttle WHERE key = $1 AND locked_until > now()`,
      [key],
    );
    return rows[0]?.seconds ?? 0;
  }

  /**
   * Counts a failure in the current window; at `max` failures the key is locked for
   * `lockSeconds`. Returns the seconds locked (0 when not locked yet).
   */
  async recordFailure(key: string, max: number, lockSeconds: number): Promise<number> {
    const rows: Array<{ failures: number }> = await this.dataSource.query(
      `INSERT INTO login_throttle AS t (key, failures, window_started_at) VALUES ($1, 1, now())
       ON CONFLICT (key) DO UPDATE SET
         failures = CASE WHEN t.window_started_at < now() - make_interval(secs => $2) THEN 1 ELSE t.failures + 1 END,
         window_started_at = CASE WHEN t.window_started_at < now() - make_interval(secs => $2) THEN now() ELSE t.window_started_at END
       RETURNING failures`,
      [key, lockSeconds],
    );
    if (rows[0].failures < max) return 0;
    await this.dataSource.query(
      `UPDATE login_throttle SET locked_until = now() + make_interval(secs => $2), failures = 0, window_started_at = now() WHERE key = $1`,
      [key, lockSeconds],
    );
    return lockSeconds;
  }

  async clear(key: string): Promise<void> {
    await this.dataSource.query('DELETE FROM login_throttle WHERE key = $1', [key]);
  }
}
