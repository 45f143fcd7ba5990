import { mkdirSync } from 'node:fs';
import lockfile from 'proper-lockfile';

export class DataDirLockedError extends Error {}

/**
 * PGlite has no lock of its own and two processes on one data directory corrupt it.
 * Takes an exclusive lock on the directory (a lock dir refreshed every few seconds, stale
 * after 20 s so a killed process does not block the next start).
 */
export async function lockDataDirectory(dir: string): Promise<() => Promise<void>> {
  mkdirSync(dir, { recursive: true });
  try {
    return await lockfile.lock(dir, { lockfilePath: `${dir}/.lock`, stale: 20_000, update: 5_000, retries: 0, realpath: false });
  } catch (err) {
    if ((err as { code?: string }).code === 'ELOCKED') {
      throw new DataDirLockedError(
        `DATA_DIR: ${dir} is in use by another process of this service. Stop it, or give this process another DATA_DIR (or a DATABASE_URL).`,
      );
    }
    throw err;
  }
}
