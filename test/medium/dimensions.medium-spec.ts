import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { DatasetsModule } from '#src/modules/datasets/datasets.module.js';
import { DimensionsService } from '#src/modules/datasets/dimensions/dimensions.service.js';
import type { ResolvePartitionQuery } from '#src/modules/datasets/dto/dimensions.dto.js';
import { PartitionsService } from '#src/modules/datasets/dimensions/partitions.service.js';
import { QueryService } from '#src/modules/datasets/rows/query.service.js';
import { VersionsService } from '#src/modules/datasets/versions/versions.service.js';
import { domainError, startMedium, type Caller, type Medium } from './medium.js';

const ROWS = [
  { q: 'How do I get a refund?', conv: 'c1', lang: 'en' },
  { q: 'Refund still missing', conv: 'c1', lang: 'en' },
  { q: 'Change my billing address', conv: 'c2', lang: 'en' },
  { q: 'Où est ma facture ?', conv: 'c3', lang: 'fr' },
  { q: 'Reset my password', conv: 'c4', lang: 'en' },
];

/**
 * DimensionsService and PartitionsService called directly over the real database: which rows an
 * assignment reaches and what it writes, the counts and queries by dimension value, partitions
 * (their filters, counts, members, metrics) and the audit they leave. The route guard's part and
 * the request validation are the e2e file's.
 */
describe('service tier: dataset dimensions and partitions', () => {
  let s: Medium;
  let dims: DimensionsService;
  let parts: PartitionsService;
  let c: Caller;

  beforeAll(async () => {
    s = await startMedium([DatasetsModule]);
    dims = s.get(DimensionsService);
    parts = s.get(PartitionsService);
    c = await s.caller();
  });
  afterAll(async () => {
    await s?.close();
  });

  /** The support rows uploaded as a fresh dataset, with its version entity. */
  const support = async () => {
    const data = await s.dataset(c, ROWS);
    const { dataset, version } = await s.get(VersionsService).require(c.access, data.datasetId, data.versionId);
    return { ...data, ids: data.rowIds, dataset, version };
  };

  /** Topic refunds by rule, then billing on rows 2, 3 and 1, persona new on rows 0 and 2. */
  const assigned = async () => {
    const d = await support();
    const assign = (body: Parameters<DimensionsService['assign']>[2]) =>
      dims.assign(c.access, d.datasetId, body, c.principal);
    await assign({
      dimension: 'topic',
      value: 'refunds',
      rule: { field: 'q', op: 'contains', value: 'efund', case_insensitive: true },
    });
    await assign({ dimension: 'topic', value: 'billing', row_ids: [d.ids[2], d.ids[3], d.ids[1]] });
    await assign({ dimension: 'persona', value: 'new', row_ids: [d.ids[0], d.ids[2]] });
    return d;
  };

  /** `assigned()` with the version mapped (input q, sessions by conv) and the reloaded version. */
  const mapped = async () => {
    const d = await assigned();
    await s
      .get(VersionsService)
      .map(c.access, d.datasetId, d.versionId, { input: 'q', session_id: 'conv' }, c.principal);
    const { version } = await s.get(VersionsService).require(c.access, d.datasetId, d.versionId);
    return { ...d, version };
  };

  const stored = (datasetId: string) =>
    s.query<{ row_id: string; dimension: string; value: string; assigned_by: string }>(
      'SELECT row_id, dimension, value, assigned_by FROM dataset_row_dimensions WHERE dataset_id = $1 ORDER BY dimension, row_id',
      [datasetId],
    );

  const definitions = (datasetId: string) =>
    s.query<{ name: string; description: string; values: string[] }>(
      'SELECT name, description, values FROM dataset_dimensions WHERE dataset_id = $1 ORDER BY name',
      [datasetId],
    );

  const auditOf = (action: string, datasetId: string) =>
    s.query<{ actor_id: string; details: Record<string, unknown> }>(
      'SELECT actor_id, details FROM audit_events WHERE action = $1 AND target_id = $2 AND workspace_id = $3 ORDER BY created_at, id',
      [action, datasetId, c.workspaceId],
    );

  const sorted = <T extends { row_id: string }>(rows: T[]) =>
    [...rows].sort((a, b) => a.row_id.localeCompare(b.row_id));

  const page = (query: Partial<ResolvePartitionQuery> = {}): ResolvePartitionQuery =>
    ({ limit: 100, offset: 0, include_rows: false, ...query }) as ResolvePartitionQuery;

  describe('assign', () => {
    it('by rule creates the dimension and the value and assigns every matching row, with its audit', async () => {
      const d = await support();
      const rule = { field: 'q', op: 'contains', value: 'efund', case_insensitive: true };
      expect(
        await dims.assign(
          c.access,
          d.datasetId,
          { dimension: 'topic', value: 'refunds', rule, description: 'What the user asks about' },
          c.principal,
        ),
      ).toEqual({
        dataset_id: d.datasetId,
        version_id: d.versionId,
        dimension: 'topic',
        value: 'refunds',
        assigned: 2,
        reassigned: 0,
        created_dimension: true,
        created_value: true,
      });
      const me = c.principal.userId;
      expect(await stored(d.datasetId)).toEqual(
        sorted([
          { row_id: d.ids[0], dimension: 'topic', value: 'refunds', assigned_by: me },
          { row_id: d.ids[1], dimension: 'topic', value: 'refunds', assigned_by: me },
        ]),
      );
      expect(await definitions(d.datasetId)).toEqual([
        { name: 'topic', description: 'What the user asks about', values: ['refunds'] },
      ]);
      expect(await auditOf('dimension.assigned', d.datasetId)).toEqual([
        {
          actor_id: me,
          details: { dimension: 'topic', value: 'refunds', version_id: d.versionId, rule, assigned: 2, reassigned: 0 },
        },
      ]);
    });

    it('by row ids reassigns rows that carried another value: one value per dimension per row', async () => {
      const d = await support();
      await dims.assign(
        c.access,
        d.datasetId,
        { dimension: 'topic', value: 'refunds', row_ids: [d.ids[0], d.ids[1]] },
        c.principal,
      );
      expect(
        await dims.assign(
          c.access,
          d.datasetId,
          { dimension: 'topic', value: 'billing', row_ids: [d.ids[2], d.ids[3], d.ids[1]], description: 'ignored' },
          c.principal,
        ),
      ).toEqual(expect.objectContaining({ assigned: 3, reassigned: 1, created_dimension: false, created_value: true }));
      const me = c.principal.userId;
      expect(await stored(d.datasetId)).toEqual(
        sorted([
          { row_id: d.ids[0], dimension: 'topic', value: 'refunds', assigned_by: me },
          { row_id: d.ids[1], dimension: 'topic', value: 'billing', assigned_by: me },
          { row_id: d.ids[2], dimension: 'topic', value: 'billing', assigned_by: me },
          { row_id: d.ids[3], dimension: 'topic', value: 'billing', assigned_by: me },
        ]),
      );
      // The description is the one the dimension was created with.
      expect(await definitions(d.datasetId)).toEqual([
        { name: 'topic', description: '', values: ['refunds', 'billing'] },
      ]);
      expect((await auditOf('dimension.assigned', d.datasetId)).map((a) => a.details)).toEqual([
        {
          dimension: 'topic',
          value: 'refunds',
          version_id: d.versionId,
          row_ids: [d.ids[0], d.ids[1]],
          assigned: 2,
          reassigned: 0,
        },
        {
          dimension: 'topic',
          value: 'billing',
          version_id: d.versionId,
          row_ids: [d.ids[2], d.ids[3], d.ids[1]],
          assigned: 3,
          reassigned: 1,
        },
      ]);
    });

    it('assigns a row named twice (in any case) once; the same value again is neither new nor a reassignment', async () => {
      const d = await support();
      await dims.assign(
        c.access,
        d.datasetId,
        { dimension: 'topic', value: 'billing', row_ids: [d.ids[2]] },
        c.principal,
      );
      expect(
        await dims.assign(
          c.access,
          d.datasetId,
          { dimension: 'topic', value: 'billing', row_ids: [d.ids[2], d.ids[2].toUpperCase(), d.ids[4]] },
          c.principal,
        ),
      ).toEqual(
        expect.objectContaining({ assigned: 2, reassigned: 0, created_dimension: false, created_value: false }),
      );
      expect((await stored(d.datasetId)).map((r) => r.row_id)).toEqual([d.ids[2], d.ids[4]].sort());
    });

    it('a rule matching no row still creates the dimension and its value', async () => {
      const d = await support();
      expect(
        await dims.assign(
          c.access,
          d.datasetId,
          { dimension: 'topic', value: 'shipping', rule: { field: 'q', op: 'contains', value: 'parcel' } },
          c.principal,
        ),
      ).toEqual(expect.objectContaining({ assigned: 0, reassigned: 0, created_dimension: true, created_value: true }));
      expect(await stored(d.datasetId)).toEqual([]);
      expect(await definitions(d.datasetId)).toEqual([{ name: 'topic', description: '', values: ['shipping'] }]);
    });

    it('refuses neither or both of row_ids and rule, and rows the version lacks, writing nothing', async () => {
      const d = await support();
      const other = await s.dataset(c, [{ q: 'elsewhere' }]);
      await domainError(
        dims.assign(c.access, d.datasetId, { dimension: 'topic', value: 'x' }, c.principal),
        'validation_failed',
        { errors: [{ field: 'row_ids', message: 'exactly one of row_ids and rule is required' }] },
      );
      await domainError(
        dims.assign(
          c.access,
          d.datasetId,
          { dimension: 'topic', value: 'x', row_ids: [d.ids[0]], rule: { field: 'q', op: 'eq', value: 'x' } },
          c.principal,
        ),
        'validation_failed',
        { errors: [{ field: 'rule', message: 'exactly one of row_ids and rule is required' }] },
      );
      const ghost = randomUUID();
      await domainError(
        dims.assign(
          c.access,
          d.datasetId,
          { dimension: 'topic', value: 'x', row_ids: [d.ids[0], ghost, other.rowIds[0]] },
          c.principal,
        ),
        'row_not_found',
        { row_ids: [ghost, other.rowIds[0]] },
      );
      await domainError(
        dims.assign(
          c.access,
          d.datasetId,
          { dimension: 'topic', value: 'x', rule: { field: 'q', op: 'near', value: 1 } },
          c.principal,
        ),
        'invalid_filter',
        { pointer: '/rule/op' },
      );
      expect(await stored(d.datasetId)).toEqual([]);
      expect(await definitions(d.datasetId)).toEqual([]);
      expect(await auditOf('dimension.assigned', d.datasetId)).toEqual([]);
    });
  });

  describe('summary, values and queries', () => {
    it('summarises every dimension with its values by count, assigned and unassigned rows', async () => {
      const d = await assigned();
      expect(await dims.summary(d.dataset, d.version)).toEqual({
        dataset_id: d.datasetId,
        version_id: d.versionId,
        row_count: 5,
        dimensions: [
          {
            name: 'persona',
            description: '',
            values: [{ value: 'new', count: 2 }],
            assigned_rows: 2,
            unassigned_rows: 3,
          },
          {
            name: 'topic',
            description: '',
            values: [
              { value: 'billing', count: 3 },
              { value: 'refunds', count: 1 },
            ],
            assigned_rows: 4,
            unassigned_rows: 1,
          },
        ],
      });
    });

    it('answers (dimension, value) counts with shares, of one dimension or all; an unknown one is refused', async () => {
      const d = await assigned();
      expect((await dims.values(d.dataset, d.version, 'topic')).values).toEqual([
        { dimension: 'topic', value: 'billing', count: 3, share: 0.6 },
        { dimension: 'topic', value: 'refunds', count: 1, share: 0.2 },
      ]);
      expect(await dims.values(d.dataset, d.version, undefined)).toEqual({
        dataset_id: d.datasetId,
        version_id: d.versionId,
        row_count: 5,
        values: expect.arrayContaining([
          { dimension: 'persona', value: 'new', count: 2, share: 0.4 },
          { dimension: 'topic', value: 'billing', count: 3, share: 0.6 },
          { dimension: 'topic', value: 'refunds', count: 1, share: 0.2 },
        ]),
      });
      expect((await dims.values(d.dataset, d.version, undefined)).values).toHaveLength(3);
      await domainError(dims.values(d.dataset, d.version, 'nope'), 'unknown_dimension', {
        unknown: ['nope'],
        available: ['persona', 'topic'],
      });
    });

    it('queries rows by dimension values with counts per group, and with a filter', async () => {
      const d = await assigned();
      const res = await dims.queryRows(d.dataset, d.version, {
        dimensions: { topic: ['billing'] },
        group_by: ['persona'],
        limit: 10,
      });
      expect(res.total).toBe(3);
      expect(res.groups).toEqual([
        { values: { persona: null }, count: 2 },
        { values: { persona: 'new' }, count: 1 },
      ]);
      expect(res.items).toEqual([
        { _row_id: d.ids[1], ...ROWS[1], _dimensions: { topic: 'billing' } },
        { _row_id: d.ids[2], ...ROWS[2], _dimensions: { topic: 'billing', persona: 'new' } },
        { _row_id: d.ids[3], ...ROWS[3], _dimensions: { topic: 'billing' } },
      ]);
      expect(
        await dims.queryRows(d.dataset, d.version, {
          dimensions: { topic: ['billing', 'refunds'] },
          filter: { field: 'lang', op: 'eq', value: 'en' },
          limit: 0,
        }),
      ).toEqual(expect.objectContaining({ total: 3, items: [], limit: 0, offset: 0 }));
    });

    it('refuses an unknown grouping dimension and dimension values that are not a non-empty array of strings', async () => {
      const d = await assigned();
      await domainError(dims.queryRows(d.dataset, d.version, { group_by: ['ghost'] }), 'unknown_dimension', {
        unknown: ['ghost'],
        available: ['persona', 'topic'],
      });
      for (const values of [[], [1]]) {
        await domainError(
          dims.queryRows(d.dataset, d.version, { dimensions: { topic: values as unknown as string[] } }),
          'validation_failed',
          { errors: [{ field: 'dimensions.topic', message: 'a non-empty array of strings' }] },
        );
      }
    });

    it('filters rows by dimension in the query language: a value, or whether a row has one', async () => {
      const d = await assigned();
      const query = s.get(QueryService);
      const ids = async (filter: unknown) =>
        (await query.query(d.version, { filter } as Parameters<QueryService['query']>[1])).items.map(
          (row) => row._row_id,
        );
      expect(
        await ids({
          or: [
            { dimension: 'topic', op: 'eq', value: 'refunds' },
            { dimension: 'persona', op: 'is_null', value: false },
          ],
        }),
      ).toEqual([d.ids[0], d.ids[2]]);
      expect(await ids({ dimension: 'topic', op: 'is_null' })).toEqual([d.ids[4]]);
    });
  });

  describe('partitions', () => {
    it('saves a partition by dimension values and a filter, counting its rows, with its audit', async () => {
      const d = await mapped();
      const created = await parts.create(
        c.access,
        d.dataset,
        d.version,
        {
          name: 'English money questions',
          dimension_values: { topic: ['billing', 'refunds'] },
          filter: { field: 'lang', op: 'eq', value: 'en' },
        },
        c.principal,
      );
      expect(created).toEqual(
        expect.objectContaining({
          dataset_id: d.datasetId,
          version_id: d.versionId,
          name: 'English money questions',
          description: '',
          level: 'session',
          dimension_values: { topic: ['billing', 'refunds'] },
          filter: { field: 'lang', op: 'eq', value: 'en' },
          row_count: 3,
          created_by: c.principal.userId,
        }),
      );
      expect(
        await s.query('SELECT workspace_id, name, level, created_by FROM dataset_partitions WHERE id = $1', [
          created.id,
        ]),
      ).toEqual([
        {
          workspace_id: c.workspaceId,
          name: 'English money questions',
          level: 'session',
          created_by: c.principal.userId,
        },
      ]);
      expect(await auditOf('partition.created', d.datasetId)).toEqual([
        {
          actor_id: c.principal.userId,
          details: { partition_id: created.id, name: 'English money questions', version_id: d.versionId },
        },
      ]);
      // The count follows later assignments.
      await dims.assign(
        c.access,
        d.datasetId,
        { dimension: 'topic', value: 'billing', row_ids: [d.ids[4]] },
        c.principal,
      );
      expect((await parts.list(d.version)).map((p) => [p.id, p.row_count])).toEqual([[created.id, 4]]);
    });

    it('refuses a name the version has in any case, a level a test-case dataset lacks, and malformed dimension values', async () => {
      const d = await mapped();
      await parts.create(c.access, d.dataset, d.version, { name: 'English money questions' }, c.principal);
      await domainError(
        parts.create(c.access, d.dataset, d.version, { name: 'english MONEY questions' }, c.principal),
        'partition_name_taken',
      );
      await domainError(
        parts.create(c.access, d.dataset, d.version, { name: 'traces', level: 'trace' }, c.principal),
        'level_not_supported',
      );
      await domainError(
        parts.create(
          c.access,
          d.dataset,
          d.version,
          { name: 'empty', dimension_values: { topic: [] as string[] } },
          c.principal,
        ),
        'validation_failed',
      );
      expect(
        (
          await s.query<{ name: string }>('SELECT name FROM dataset_partitions WHERE dataset_id = $1', [d.datasetId])
        ).map((p) => p.name),
      ).toEqual(['English money questions']);
      expect(await auditOf('partition.created', d.datasetId)).toHaveLength(1);
    });

    it('resolves a partition to sessions by the mapped column, paged, with their rows on request', async () => {
      const d = await mapped();
      const { id } = await parts.create(
        c.access,
        d.dataset,
        d.version,
        {
          name: 'money',
          dimension_values: { topic: ['billing', 'refunds'] },
          filter: { field: 'lang', op: 'eq', value: 'en' },
        },
        c.principal,
      );
      expect(await parts.resolve(d.version, id, page())).toEqual([
        { level: 'session', session_id: 'c1', row_ids: [d.ids[0], d.ids[1]] },
        { level: 'session', session_id: 'c2', row_ids: [d.ids[2]] },
      ]);
      expect(await parts.resolve(d.version, id, page({ limit: 1, offset: 1, include_rows: true }))).toEqual([
        { level: 'session', session_id: 'c2', row_ids: [d.ids[2]], rows: [{ _row_id: d.ids[2], ...ROWS[2] }] },
      ]);
    });

    it('lists the metrics the mapping supports and what the others lack, for the version and a partition', async () => {
      const d = await mapped();
      const metrics = parts.availableMetrics(d.version);
      expect(metrics.mapping).toEqual({ input: 'q', session_id: 'conv' });
      const metric = (name: string) => metrics.metrics.find((m) => m.name === name);
      expect(metric('answer_relevance')).toEqual(expect.objectContaining({ available: true, missing: [] }));
      expect(metric('exact_match')).toEqual(
        expect.objectContaining({ available: false, missing: ['expected_output'] }),
      );
      expect(metric('faithfulness')).toEqual(expect.objectContaining({ available: false, missing: ['context'] }));
      const { id } = await parts.create(
        c.access,
        d.dataset,
        d.version,
        { name: 'billing', dimension_values: { topic: ['billing'] } },
        c.principal,
      );
      expect(await parts.partitionMetrics(d.version, id)).toEqual({
        ...metrics,
        partition_id: id,
        row_count: 3,
      });
    });

    it('deletes a partition with its audit; one of another version is not found through this one', async () => {
      const d = await mapped();
      const other = await support();
      const { id } = await parts.create(c.access, d.dataset, d.version, { name: 'p' }, c.principal);
      await domainError(parts.delete(c.access, other.datasetId, other.version, id, c.principal), 'partition_not_found');
      await domainError(parts.resolve(other.version, id, page()), 'partition_not_found');
      await parts.delete(c.access, d.datasetId, d.version, id, c.principal);
      expect(await s.query('SELECT id FROM dataset_partitions WHERE id = $1', [id])).toEqual([]);
      expect(await auditOf('partition.deleted', d.datasetId)).toEqual([
        { actor_id: c.principal.userId, details: { partition_id: id, version_id: d.versionId } },
      ]);
    });
  });
});
