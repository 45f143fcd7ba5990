import type { ItemKey } from '../runs.repository.js';

/**
 * A run's items a keyset page at a time, in their order (ordinal, row_id, repetition): `read`
 * answers the page after a key. The pages are read one after another, each one statement, so the
 * same loop is right inside a transaction (one client, one query at a time) and outside one.
 */
export async function* itemPages<T extends ItemKey>(
  read: (from: ItemKey | null, limit: number) => Promise<T[]>,
  size: number,
): AsyncGenerator<T[]> {
  let from: ItemKey | null = null;
  for (;;) {
    const page = await read(from, size);
    if (page.length) yield page;
    if (page.length < size) return;
    const last = page[page.length - 1];
    from = { ordinal: last.ordinal, row_id: last.row_id, repetition: last.repetition };
  }
}
