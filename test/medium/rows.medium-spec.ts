import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { isUuid } from '#libs/common/uuid.js';
import { DatasetsModule } from '#src/modules/datasets/datasets.module.js';
import { DatasetsService } from '#src/modules/datasets/datasets.service.js';
import { ListVersionsQuery } from '#src/modules/datasets/dto/dataset.dto.js';
import { RowsService } from '#src/modules/datasets/rows/rows.service.js';
import { VersionsService } from '#src/modules/datasets/versions/versions.service.js';
import { domainError, startMedium, type Caller, type Medium } from './medium.js';

/**
 * RowsService's staging (what each edit answers, what it refuses, what the audit keeps) and
 * VersionsService's lifecycle (promote, demote, map, a commit that promotes) called directly over
 * the real database. How a commit builds its version is test/medium/commits.medium-spec.ts's.
 */
describe('service tier: staged row edits and the version lifecycle', () => {
  let s: Medium;
  let rows: RowsService;
  let versions: VersionsService;
  let c: Caller;

  beforeAll(async () => {
    s = await startMedium([DatasetsModule]);
    rows = s.get(RowsService);
    versions = s.get(VersionsService);
    c = await s.caller();
  });
  afterAll(async () => {
    await s?.close();
  });

  const threeRows = () =>
    s.dataset(c, [
      { input: 'q1', expected: 'a1' },
      { input: 'q2', expected: 'a2' },
      { input: 'q3', expected: 'a3' },
    ]);

  /** Another member of the caller's workspace. */
  const colleague = async (): Promise<Caller> => {
    const other = await s.factory.newUser();
    await s.factory.addMember(c.workspaceId, other.id, 'member');
    return {
      ...c,
      principal: { ...c.principal, userId: other.id, email: other.email, tokenId: randomUUID() },
      access: { ...c.access, role: 'member' },
    };
  };

  const auditOf = (action: string, datasetId: string) =>
    s.query<{ actor_id: string; details: Record<string, unknown> }>(
      `SELECT actor_id, details FROM audit_events WHERE action = $1 AND target_id = $2 AND workspace_id = $3 ORDER BY created_at, id`,
      [action, datasetId, c.workspaceId],
    );

  const storedRows = async (datasetId: string) =>
    (await s.query<{ n: number }>('SELECT count(*)::int AS n FROM dataset_rows WHERE dataset_id = $1', [datasetId]))[0]
      .n;

  describe('staging', () => {
    it('answers each edit with the rows as staged; nothing is stored before the commit; the dataset counts the edits', async () => {
      const data = await threeRows();
      const [r1, r2, r3] = data.rowIds;
      const given = randomUUID();
      const inserted = await rows.insert(
        c.access,
        data.datasetId,
        {
          rows: [
            { input: 'q4', expected: 'a4', extra: { k: 1 } },
            { _row_id: given.toUpperCase(), input: 'q5' },
          ],
        },
        c.principal,
      );
      const made = inserted[0]._row_id as string;
      expect(isUuid(made)).toBe(true);
      expect(inserted).toEqual([
        { _row_id: made, input: 'q4', expected: 'a4', extra: { k: 1 } },
        { _row_id: given, input: 'q5' },
      ]);
      // A staged insertion is updated as an insertion, merged over what was staged.
      expect(
        await rows.update(
          c.access,
          data.datasetId,
          { rows: { [r1]: { expected: 'A1' }, [given]: { expected: 'a5' } } },
          c.principal,
        ),
      ).toEqual({
        [r1]: { _row_id: r1, input: 'q1', expected: 'A1' },
        [given]: { _row_id: given, input: 'q5', expected: 'a5' },
      });
      expect(
        await rows.update(
          c.access,
          data.datasetId,
          { rows: { [r3]: { input: 'only' } }, mode: 'replace' },
          c.principal,
        ),
      ).toEqual({ [r3]: { _row_id: r3, input: 'only' } });
      // The same id twice is one deletion.
      expect(await rows.delete(c.access, data.datasetId, { row_ids: [r2, r2.toUpperCase()] }, c.principal)).toEqual([
        r2,
      ]);

      expect((await rows.staged(c.access, data.datasetId)).map((e) => [e.row_id, e.op, e.staged_by]).sort()).toEqual(
        [
          [r1, 'update', c.principal.userId],
          [r2, 'delete', c.principal.userId],
          [r3, 'update', c.principal.userId],
          [made, 'insert', c.principal.userId],
          [given, 'insert', c.principal.userId],
        ].sort(),
      );
      expect((await s.get(DatasetsService).get(c.access, data.datasetId)).staged_edits).toBe(5);
      expect(await storedRows(data.datasetId)).toBe(3);

      const result = await rows.commit(c.access, data.datasetId, { message: 'fix answers' }, c.principal);
      expect(result.version).toEqual(
        expect.objectContaining({
          number: 2,
          parent_version_id: data.versionId,
          columns: ['input', 'expected', 'extra'],
        }),
      );
      expect((await s.get(DatasetsService).get(c.access, data.datasetId)).staged_edits).toBe(0);
    });

    it('records each staging and the commit in the audit', async () => {
      const data = await threeRows();
      const [r1, r2] = data.rowIds;
      const added = randomUUID();
      await rows.insert(c.access, data.datasetId, { rows: [{ _row_id: added, input: 'q4' }] }, c.principal);
      await rows.update(c.access, data.datasetId, { rows: { [r1]: { expected: 'A1' } } }, c.principal);
      await rows.delete(c.access, data.datasetId, { row_ids: [r2] }, c.principal);
      const result = await rows.commit(c.access, data.datasetId, { message: 'fix answers' }, c.principal);
      const me = c.principal.userId;
      expect(await auditOf('rows.staged', data.datasetId)).toEqual([
        { actor_id: me, details: { op: 'insert', count: 1, row_ids: [added] } },
        { actor_id: me, details: { op: 'update', count: 1, row_ids: [r1] } },
        { actor_id: me, details: { op: 'delete', count: 1, row_ids: [r2] } },
      ]);
      expect(await auditOf('rows.committed', data.datasetId)).toEqual([
        {
          actor_id: me,
          details: {
            version_id: result.version.id,
            number: 2,
            message: 'fix answers',
            inserted: 1,
            updated: 1,
            deleted: 1,
          },
        },
      ]);
      // Discarding records how many edits went; discarding nothing records nothing.
      await rows.update(c.access, data.datasetId, { rows: { [r1]: { expected: 'again' } } }, c.principal);
      await rows.discard(c.access, data.datasetId, c.principal);
      await rows.discard(c.access, data.datasetId, c.principal);
      expect(await auditOf('rows.discarded', data.datasetId)).toEqual([{ actor_id: me, details: { edits: 1 } }]);
    });

    it('lets the writer of a staged edit restage it; once discarded, another writer may edit the row', async () => {
      const data = await threeRows();
      const [r1] = data.rowIds;
      const other = await colleague();
      await rows.update(c.access, data.datasetId, { rows: { [r1]: { expected: 'mine' } } }, c.principal);
      await domainError(
        rows.update(other.access, data.datasetId, { rows: { [r1]: { expected: 'theirs' } } }, other.principal),
        'row_edit_conflict',
      );
      await rows.update(c.access, data.datasetId, { rows: { [r1]: { expected: 'mine again' } } }, c.principal);
      expect((await rows.staged(c.access, data.datasetId)).map((e) => [e.row_id, e.row])).toEqual([
        [r1, { _row_id: r1, input: 'q1', expected: 'mine again' }],
      ]);
      await rows.discard(c.access, data.datasetId, c.principal);
      await rows.update(other.access, data.datasetId, { rows: { [r1]: { expected: 'theirs' } } }, other.principal);
      expect(
        (await rows.staged(c.access, data.datasetId)).map((e) => [e.row_id, e.staged_by, e.row?.expected]),
      ).toEqual([[r1, other.principal.userId, 'theirs']]);
      // Discarding takes every user's staged edits, not only the caller's.
      await rows.discard(c.access, data.datasetId, c.principal);
      expect(await rows.staged(c.access, data.datasetId)).toEqual([]);
    });
  });

  describe('refused edits', () => {
    it('refuses rows breaking the row rules (invalid_row), naming where, and stages nothing', async () => {
      const data = await threeRows();
      await domainError(
        rows.insert(c.access, data.datasetId, { rows: [{ a: 1 }, { _row_id: 'x' }] }, c.principal),
        'invalid_row',
        { where: 'rows[1]', reason: '_row_id must be a UUID, found "x"' },
      );
      await domainError(
        rows.insert(c.access, data.datasetId, { rows: [{ a: 'nul\u0000' }] }, c.principal),
        'invalid_row',
        { where: 'rows[0]', reason: 'a value contains the NUL character (\\u0000), which cannot be stored' },
      );
      const twice = randomUUID();
      await domainError(
        rows.insert(
          c.access,
          data.datasetId,
          { rows: [{ _row_id: twice }, { _row_id: twice.toUpperCase() }] },
          c.principal,
        ),
        'invalid_row',
        { row_ids: [twice] },
      );
      await domainError(
        rows.update(c.access, data.datasetId, { rows: { [data.rowIds[0]]: { a: 'nul\u0000' } } }, c.principal),
        'invalid_row',
        {
          where: `rows.${data.rowIds[0]}`,
          reason: 'a value contains the NUL character (\\u0000), which cannot be stored',
        },
      );
      expect(await rows.staged(c.access, data.datasetId)).toEqual([]);
    });

    it('refuses an update naming no rows, a key that is no row id, or values that are no object (validation_failed)', async () => {
      const data = await threeRows();
      await domainError(rows.update(c.access, data.datasetId, { rows: {} }, c.principal), 'validation_failed', {
        errors: [{ field: 'rows', message: 'between 1 and 1000 row ids' }],
      });
      await domainError(
        rows.update(c.access, data.datasetId, { rows: { 'not-a-uuid': {} } }, c.principal),
        'validation_failed',
        { errors: [{ field: 'rows.not-a-uuid', message: 'must be a UUID' }] },
      );
      await domainError(
        rows.update(c.access, data.datasetId, { rows: { [data.rowIds[0]]: 'x' as never } }, c.principal),
        'validation_failed',
        { errors: [{ field: `rows.${data.rowIds[0]}`, message: 'must be an object' }] },
      );
      expect(await rows.staged(c.access, data.datasetId)).toEqual([]);
    });

    it('refuses an id the latest version has (row_exists), staged or stored, and rows a commit removed (row_not_found)', async () => {
      const data = await threeRows();
      const [r1, r2] = data.rowIds;
      await domainError(rows.insert(c.access, data.datasetId, { rows: [{ _row_id: r1 }] }, c.principal), 'row_exists', {
        row_ids: [r1],
      });
      const added = randomUUID();
      await rows.insert(c.access, data.datasetId, { rows: [{ _row_id: added, input: 'x' }] }, c.principal);
      await domainError(
        rows.insert(c.access, data.datasetId, { rows: [{ _row_id: added, input: 'y' }] }, c.principal),
        'row_exists',
        { row_ids: [added] },
      );
      await rows.delete(c.access, data.datasetId, { row_ids: [r2] }, c.principal);
      await rows.commit(c.access, data.datasetId, {}, c.principal);
      // r2 is gone from version 2, though version 1 still has it.
      await domainError(
        rows.update(c.access, data.datasetId, { rows: { [r2]: { a: 1 } } }, c.principal),
        'row_not_found',
        { row_ids: [r2] },
      );
      await domainError(rows.delete(c.access, data.datasetId, { row_ids: [r2] }, c.principal), 'row_not_found', {
        row_ids: [r2],
      });
      expect(await rows.staged(c.access, data.datasetId)).toEqual([]);
    });
  });

  describe('the version lifecycle', () => {
    const states = async (datasetId: string) => ({
      versions: await s.query<{ number: number; state: string; promoted: boolean; retired: boolean }>(
        `SELECT number, state, promoted_at IS NOT NULL AS promoted, retired_at IS NOT NULL AS retired
           FROM dataset_versions WHERE dataset_id = $1 ORDER BY number`,
        [datasetId],
      ),
      current: (await s.query('SELECT current_version_id FROM datasets WHERE id = $1', [datasetId]))[0]
        .current_version_id as string | null,
    });

    it('keeps one current version: promoting another makes the former a candidate; demoting retires', async () => {
      const data = await threeRows();
      const v1 = data.versionId;
      await rows.update(c.access, data.datasetId, { rows: { [data.rowIds[0]]: { extra: 'x' } } }, c.principal);
      const v2 = (await rows.commit(c.access, data.datasetId, {}, c.principal)).version.id;

      const promoted = await versions.promote(c.access, data.datasetId, v1, c.principal);
      expect(promoted).toEqual(expect.objectContaining({ id: v1, state: 'current', promoted_at: expect.any(Date) }));
      await domainError(versions.promote(c.access, data.datasetId, v1, c.principal), 'version_state_conflict');
      await versions.promote(c.access, data.datasetId, v2, c.principal);
      expect(await states(data.datasetId)).toEqual({
        versions: [
          { number: 1, state: 'candidate', promoted: true, retired: false },
          { number: 2, state: 'current', promoted: true, retired: false },
        ],
        current: v2,
      });
      const listed = async (state?: 'current' | 'candidate' | 'retired') =>
        (await versions.list(c.access, data.datasetId, Object.assign(new ListVersionsQuery(), { state }))).items.map(
          (v) => v.number,
        );
      expect([await listed(), await listed('current'), await listed('candidate')]).toEqual([[2, 1], [2], [1]]);

      const demoted = await versions.demote(c.access, data.datasetId, v2, c.principal);
      expect(demoted).toEqual(expect.objectContaining({ state: 'retired', retired_at: expect.any(Date) }));
      await domainError(versions.demote(c.access, data.datasetId, v2, c.principal), 'version_state_conflict');
      expect(await states(data.datasetId)).toEqual({
        versions: [
          { number: 1, state: 'candidate', promoted: true, retired: false },
          { number: 2, state: 'retired', promoted: true, retired: true },
        ],
        current: null,
      });
      // A retired version may be promoted again, and is retired no more.
      await versions.promote(c.access, data.datasetId, v2, c.principal);
      expect((await states(data.datasetId)).versions[1]).toEqual({
        number: 2,
        state: 'current',
        promoted: true,
        retired: false,
      });

      const me = c.principal.userId;
      expect(await auditOf('version.promoted', data.datasetId)).toEqual([
        { actor_id: me, details: { version_id: v1, number: 1, from: 'candidate', previous_current: null } },
        { actor_id: me, details: { version_id: v2, number: 2, from: 'candidate', previous_current: 1 } },
        { actor_id: me, details: { version_id: v2, number: 2, from: 'retired', previous_current: null } },
      ]);
      expect(await auditOf('version.demoted', data.datasetId)).toEqual([
        { actor_id: me, details: { version_id: v2, number: 2, from: 'current' } },
      ]);
      const unknown = randomUUID();
      await domainError(versions.promote(c.access, data.datasetId, unknown, c.principal), 'version_not_found');
      await domainError(versions.demote(c.access, data.datasetId, unknown, c.principal), 'version_not_found');
      await domainError(
        versions.map(c.access, data.datasetId, unknown, { input: 'input' }, c.principal),
        'version_not_found',
      );
    });

    it('maps columns the version has, refuses others naming what it has, and the next commit keeps the mapping and may promote', async () => {
      const data = await threeRows();
      await rows.update(c.access, data.datasetId, { rows: { [data.rowIds[0]]: { extra: 'x' } } }, c.principal);
      const v2 = (await rows.commit(c.access, data.datasetId, {}, c.principal)).version.id;
      const mapping = { input: 'input', expected_output: 'expected', metadata: ['extra'] };
      const mapped = await versions.map(
        c.access,
        data.datasetId,
        v2,
        { ...mapping, metadata: ['extra', 'extra'] },
        c.principal,
      );
      expect(mapped.mapping).toEqual(mapping);
      await domainError(
        versions.map(c.access, data.datasetId, v2, { input: 'question', metadata: ['input', 'more'] }, c.principal),
        'unknown_column',
        { unknown: ['question', 'more'], available: ['input', 'expected', 'extra'] },
      );
      expect((await s.query('SELECT mapping FROM dataset_versions WHERE id = $1', [v2]))[0].mapping).toEqual(mapping);
      expect(await auditOf('version.mapped', data.datasetId)).toEqual([
        { actor_id: c.principal.userId, details: { version_id: v2, number: 2, from: {}, to: mapping } },
      ]);

      await rows.delete(c.access, data.datasetId, { row_ids: [data.rowIds[2]] }, c.principal);
      const commit = await rows.commit(c.access, data.datasetId, { promote: true }, c.principal);
      expect(commit).toEqual(
        expect.objectContaining({
          row_count: 2,
          version: expect.objectContaining({ number: 3, state: 'current', row_count: 2, mapping }),
        }),
      );
      const v3 = commit.version.id;
      expect((await states(data.datasetId)).current).toBe(v3);

      const byId = await versions.getById(c.access, v3);
      expect(byId).toEqual(
        expect.objectContaining({
          id: v3,
          number: 3,
          dataset: {
            id: data.datasetId,
            name: expect.any(String),
            kind: expect.any(String),
            current_version_id: v3,
          },
          schema: expect.arrayContaining([expect.objectContaining({ name: 'input' })]),
        }),
      );
      expect(byId.schema.map((col) => col.name)).toEqual(['input', 'expected', 'extra']);
      // Another workspace's version is not found there.
      const stranger = await s.caller();
      await domainError(versions.getById(stranger.access, v3), 'not_found', { resource: 'dataset version' });
    });
  });
});
