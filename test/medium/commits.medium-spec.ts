import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatasetsService } from '#src/modules/datasets/datasets.service.js';
import { RowsService } from '#src/modules/datasets/rows/rows.service.js';
import { domainError, startMedium, type Caller, type Medium, type UploadedRows } from './medium.js';
import { DatasetsModule } from '#src/modules/datasets/datasets.module.js';

/**
 * RowsService called directly over the real database: staged inserts, updates and deletes
 * committed as one new version (the rows each version shows, its counts, columns and content
 * hash), conflicting and stale edits, and a commit with nothing staged.
 */
describe('service tier: commits of staged edits', () => {
  let s: Medium;
  let rows: RowsService;
  let c: Caller;

  beforeAll(async () => {
    s = await startMedium([DatasetsModule]);
    rows = s.get(RowsService);
    c = await s.caller();
  });
  afterAll(async () => {
    await s?.close();
  });

  /** What a version shows, in row order, as `data` objects (without the row ids). */
  const shown = async (datasetId: string, number: number) =>
    (
      await s.query<{ data: Record<string, unknown> }>(
        `SELECT data FROM dataset_rows WHERE dataset_id = $1 AND added_in <= $2 AND (removed_in IS NULL OR removed_in > $2) ORDER BY ordinal`,
        [datasetId, number],
      )
    ).map((r) => r.data);

  /** The content hash as docs/datasets.md defines it, computed here from the rows the version shows. */
  const expectedHash = async (datasetId: string, number: number) => {
    const lines = await s.query<{ line: string }>(
      `SELECT row_id::text || ' ' || data::text AS line FROM dataset_rows
        WHERE dataset_id = $1 AND added_in <= $2 AND (removed_in IS NULL OR removed_in > $2) ORDER BY ordinal`,
      [datasetId, number],
    );
    return createHash('sha256')
      .update(lines.map((l) => l.line).join('\n'))
      .digest('hex');
  };

  const versionRow = async (datasetId: string, number: number) =>
    (
      await s.query<{ row_count: number; content_sha256: string; changes: unknown; source: string }>(
        'SELECT row_count, content_sha256, changes, source FROM dataset_versions WHERE dataset_id = $1 AND number = $2',
        [datasetId, number],
      )
    )[0];

  const counters = async (datasetId: string) =>
    (
      await s.query<{ latest_version: number; next_ordinal: number; staged: number; versions: number }>(
        `SELECT d.latest_version, d.next_ordinal::int AS next_ordinal,
                (SELECT count(*)::int FROM dataset_staged_edits e WHERE e.dataset_id = d.id) AS staged,
                (SELECT count(*)::int FROM dataset_versions v WHERE v.dataset_id = d.id) AS versions
           FROM datasets d WHERE d.id = $1`,
        [datasetId],
      )
    )[0];

  const fourRows = () =>
    s.dataset(c, [
      { input: 'a', n: 1 },
      { input: 'b', n: 2 },
      { input: 'c', n: 3 },
      { input: 'd', n: 4 },
    ]);

  it('commits adds, updates and deletes as a new version; the version before keeps its rows', async () => {
    const data = await fourRows();
    const before = await counters(data.datasetId);
    const [a, b, c3] = data.rowIds;
    const added = [randomUUID(), randomUUID()].sort();
    await rows.insert(
      c.access,
      data.datasetId,
      {
        rows: [
          { _row_id: added[0], input: 'e', n: 5, lang: 'en' },
          { _row_id: added[1], input: 'f', n: 6 },
        ],
      },
      c.principal,
    );
    await rows.update(c.access, data.datasetId, { rows: { [b]: { n: 20 } } }, c.principal);
    // A second update of the same staged row merges over the staged one, not the stored one.
    await rows.update(c.access, data.datasetId, { rows: { [b]: { note: 'fixed' } } }, c.principal);
    await rows.update(c.access, data.datasetId, { rows: { [a]: { input: 'A' } }, mode: 'replace' }, c.principal);
    await rows.delete(c.access, data.datasetId, { row_ids: [c3] }, c.principal);
    expect((await rows.staged(c.access, data.datasetId)).map((e) => [e.row_id, e.op, e.base_version]).sort()).toEqual(
      [
        [a, 'update', 1],
        [b, 'update', 1],
        [c3, 'delete', 1],
        [added[0], 'insert', 1],
        [added[1], 'insert', 1],
      ].sort(),
    );

    const result = await rows.commit(c.access, data.datasetId, { message: 'edits' }, c.principal);
    expect(result).toEqual(
      expect.objectContaining({ dataset_id: data.datasetId, inserted: 2, updated: 2, deleted: 1, row_count: 5 }),
    );
    expect(result.version).toEqual(
      expect.objectContaining({
        number: 2,
        state: 'candidate',
        message: 'edits',
        source: 'commit',
        row_count: 5,
        // The parent's columns first, then new ones in the order the edits brought them.
        columns: ['input', 'n', 'lang', 'note'],
        changes: { inserted: 2, updated: 2, deleted: 1 },
        content_sha256: await expectedHash(data.datasetId, 2),
      }),
    );
    // Updated rows keep their place; inserted rows follow in (staged_at, row id) order.
    expect(await shown(data.datasetId, 2)).toEqual([
      { input: 'A' },
      { input: 'b', n: 20, note: 'fixed' },
      { input: 'd', n: 4 },
      { input: 'e', n: 5, lang: 'en' },
      { input: 'f', n: 6 },
    ]);
    expect(await shown(data.datasetId, 1)).toEqual([
      { input: 'a', n: 1 },
      { input: 'b', n: 2 },
      { input: 'c', n: 3 },
      { input: 'd', n: 4 },
    ]);
    expect(await versionRow(data.datasetId, 1)).toEqual(
      expect.objectContaining({ row_count: 4, content_sha256: await expectedHash(data.datasetId, 1) }),
    );
    expect(await counters(data.datasetId)).toEqual({
      latest_version: 2,
      next_ordinal: before.next_ordinal + 2,
      staged: 0,
      versions: 2,
    });
  });

  it('gives back the hash of the content: a commit that restores a row restores its version’s hash', async () => {
    const data = await fourRows();
    const [, b] = data.rowIds;
    await rows.update(c.access, data.datasetId, { rows: { [b]: { n: 99 } } }, c.principal);
    const changed = await rows.commit(c.access, data.datasetId, {}, c.principal);
    await rows.update(c.access, data.datasetId, { rows: { [b]: { n: 2 } } }, c.principal);
    const restored = await rows.commit(c.access, data.datasetId, {}, c.principal);
    const first = await versionRow(data.datasetId, 1);
    expect(changed.version.content_sha256).not.toBe(first.content_sha256);
    expect(restored.version.number).toBe(3);
    expect(restored.version.content_sha256).toBe(first.content_sha256);
    expect(restored.version.row_count).toBe(4);
  });

  it('drops a staged insertion that is deleted before the commit; a deleted row cannot be updated', async () => {
    const data = await fourRows();
    const [a] = data.rowIds;
    const [inserted] = await rows.insert(c.access, data.datasetId, { rows: [{ input: 'x' }] }, c.principal);
    const insertedId = inserted._row_id as string;
    await rows.delete(c.access, data.datasetId, { row_ids: [insertedId, a] }, c.principal);
    expect((await rows.staged(c.access, data.datasetId)).map((e) => [e.row_id, e.op])).toEqual([[a, 'delete']]);
    await domainError(
      rows.update(c.access, data.datasetId, { rows: { [a]: { n: 0 } } }, c.principal),
      'row_not_found',
      {
        row_ids: [a],
      },
    );
    await domainError(rows.delete(c.access, data.datasetId, { row_ids: [randomUUID()] }, c.principal), 'row_not_found');
    await domainError(
      rows.insert(c.access, data.datasetId, { rows: [{ _row_id: data.rowIds[1], input: 'dup' }] }, c.principal),
      'row_exists',
      { row_ids: [data.rowIds[1]] },
    );
    const result = await rows.commit(c.access, data.datasetId, {}, c.principal);
    expect([result.inserted, result.updated, result.deleted, result.row_count]).toEqual([0, 0, 1, 3]);
    expect(await shown(data.datasetId, 2)).toEqual([
      { input: 'b', n: 2 },
      { input: 'c', n: 3 },
      { input: 'd', n: 4 },
    ]);
  });

  it('refuses another user’s edit of a staged row, naming the edit it conflicts with', async () => {
    const data = await fourRows();
    const [a, b] = data.rowIds;
    const other = await s.factory.newUser();
    await s.factory.addMember(c.workspaceId, other.id, 'member');
    const second: Caller = {
      ...c,
      principal: { ...c.principal, userId: other.id, email: other.email, tokenId: randomUUID() },
      access: { ...c.access, role: 'member' },
    };
    await rows.update(c.access, data.datasetId, { rows: { [a]: { n: 10 } } }, c.principal);
    const conflict = await domainError(
      rows.update(second.access, data.datasetId, { rows: { [a]: { n: 11 }, [b]: { n: 12 } } }, second.principal),
      'row_edit_conflict',
    );
    expect(conflict.extensions.conflicts).toEqual([
      {
        row_id: a,
        op: 'update',
        staged_by: c.principal.userId,
        staged_by_email: c.principal.email,
        staged_at: expect.anything(),
      },
    ]);
    await domainError(
      rows.delete(second.access, data.datasetId, { row_ids: [a] }, second.principal),
      'row_edit_conflict',
    );
    // Nothing of the refused edits was staged: b is untouched, a keeps the first user's edit.
    expect((await rows.staged(c.access, data.datasetId)).map((e) => [e.row_id, e.staged_by, e.row?.n])).toEqual([
      [a, c.principal.userId, 10],
    ]);
    // The second user may edit other rows; the commit takes both users' edits.
    await rows.update(second.access, data.datasetId, { rows: { [b]: { n: 12 } } }, second.principal);
    const result = await rows.commit(second.access, data.datasetId, {}, second.principal);
    expect(result.updated).toBe(2);
    expect((await shown(data.datasetId, 2)).map((r) => r.n)).toEqual([10, 12, 3, 4]);
  });

  it('refuses edits staged against rows a newer version no longer has, and keeps them for discarding', async () => {
    const data = await fourRows();
    const [a] = data.rowIds;
    await rows.update(c.access, data.datasetId, { rows: { [a]: { n: 10 } } }, c.principal);
    // A new upload replaces every row: the staged update names a row version 2 does not have.
    const dir = mkdtempSync(join(tmpdir(), 'ews-commit-'));
    try {
      const path = join(dir, 'v2.json');
      const text = JSON.stringify([{ input: 'z' }]);
      writeFileSync(path, text);
      await s
        .get(DatasetsService)
        .upload(
          c.access,
          { dataset_id: data.datasetId },
          { path, originalname: 'v2.json', size: text.length },
          c.principal,
        );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await domainError(rows.commit(c.access, data.datasetId, {}, c.principal), 'stale_edits', { row_ids: [a] });
    expect(await counters(data.datasetId)).toEqual(
      expect.objectContaining({ latest_version: 2, staged: 1, versions: 2 }),
    );
    await rows.discard(c.access, data.datasetId, c.principal);
    expect(await counters(data.datasetId)).toEqual(
      expect.objectContaining({ latest_version: 2, staged: 0, versions: 2 }),
    );
  });

  it('refuses a commit with nothing staged and makes no version', async () => {
    const data: UploadedRows = await fourRows();
    const before = await counters(data.datasetId);
    await domainError(rows.commit(c.access, data.datasetId, { message: 'nothing' }, c.principal), 'nothing_to_commit');
    // Staged then discarded is nothing too.
    await rows.update(c.access, data.datasetId, { rows: { [data.rowIds[0]]: { n: 7 } } }, c.principal);
    await rows.discard(c.access, data.datasetId, c.principal);
    await domainError(rows.commit(c.access, data.datasetId, {}, c.principal), 'nothing_to_commit');
    expect(await counters(data.datasetId)).toEqual(before);
    expect(before).toEqual(expect.objectContaining({ latest_version: 1, staged: 0, versions: 1 }));
  });
});
