import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/**
 * UUIDv7 (RFC 9562): a millisecond timestamp first, then a counter seeded at random every
 * millisecond, so the ids one process makes sort in the order it made them. Rows keyed by
 * (dataset_id, row_id) then land at the right edge of the primary key's B-tree instead of on a
 * random page: a 100,000-row load spends less time in PostgreSQL (docs/performance.md#dataset-uploads).
 *
 * `uuid`'s own v7() asks crypto for 16 bytes on every call (many times the cost of node's
 * randomUUID(), docs/performance.md#dataset-uploads); here the random bytes come from a pool
 * refilled 256 ids at a time and uuid lays out and prints them.
 */
const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let used = POOL_BYTES;
let lastMs = -Infinity;
let seq = 0;

export function timeOrderedUuid(): string {
  if (used === POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const random = pool.subarray(used, (used += 16));
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    // 31 bits of the counter, its top bit clear so a millisecond has room for 2^30 more ids.
    seq = ((random[6] & 0x3f) << 24) | (random[7] << 16) | (random[8] << 8) | random[9];
  } else if (++seq > 0x7fffffff) {
    // The counter ran out within one millisecond: borrow the next (RFC 9562, 6.2).
    lastMs++;
    seq = 0;
  }
  return v7({ msecs: lastMs, seq, random });
}
