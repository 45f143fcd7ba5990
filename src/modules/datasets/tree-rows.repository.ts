import { Injectable } from '@nestjs/common';
import { sql, type SqlBool } from 'kysely';
import { DummyValue, GenerateSql } from '#libs/database/generate-sql.js';
import { Db } from '#libs/database/unit-of-work.js';
import { keyLiteral } from './bulk-rows.repository.js';
import { shownIn } from './rows/rows.repository.js';
import type { TreeCursor, TreeKeys, TreeRow } from './tree-rows.types.js';

/**
 * A version's rows read as trees (a trace dataset's spans by parent), a page at a time in keyset
 * order. The children of a row are an index range (dataset_rows_span_parent_idx names the trace
 * keys), so a page costs its rows, not the tree.
 */
@Injectable()
export class TreeRowsRepository {
  constructor(private readonly db: Db) {}

  /**
   * The rows directly under `parentId` in the group (the roots when null), by order then id,
   * after `after`, at most `limit`, each with its number of children.
   */
  @GenerateSql({
    params: [
      DummyValue.UUID,
      1,
      { group: 'trace_id', id: 'span_id', parent: 'parent_span_id', sort: 'start_time' },
      DummyValue.STRING,
      DummyValue.STRING,
      null,
      100,
    ],
  })
  async children(
    datasetId: string,
    number: number,
    keys: TreeKeys,
    groupValue: string,
    parentId: string | null,
    after: TreeCursor | null,
    limit: number,
  ): Promise<TreeRow[]> {
    const at = (alias: string, key: string) => sql<string>`${sql.ref(`${alias}.data`)} ->> ${keyLiteral(key)}`;
    const [order, id, parent] = [at('r', keys.sort), at('r', keys.id), at('r', keys.parent)];
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('dataset_rows as r')
        .select(['r.data', this.childCount('r', number, keys).as('child_count')])
        .where((eb) => eb.and(this.ofGroup('r', datasetId, number, keys, groupValue)))
        .where((eb) =>
          parentId === null
            ? this.isRoot('r', datasetId, number, keys, groupValue)
            : eb.and([eb(parent, '=', parentId), eb(id, '<>', parentId)]),
        )
        .$if(after !== null, (s) => s.where(sql<SqlBool>`(${order}, ${id}) > (${after!.sort}, ${after!.id})`))
        .orderBy(order)
        .orderBy(id)
        .limit(limit),
    );
    return rows.map((r) => ({ data: r.data as Record<string, unknown>, child_count: r.child_count ?? 0, depth: null }));
  }

  /**
   * The rows of the group at depth `maxDepth` or above (a root is 1), by depth, order and id,
   * after `after`, at most `limit`, each with its depth and number of children. The tree is
   * walked down from the roots by the parent index (ids only, level by level); only the page's
   * rows are read whole. A row under a parent cycle is reached from no root and is not answered.
   */
  @GenerateSql({
    params: [
      DummyValue.UUID,
      1,
      { group: 'trace_id', id: 'span_id', parent: 'parent_span_id', sort: 'start_time' },
      DummyValue.STRING,
      3,
      null,
      100,
    ],
  })
  async toDepth(
    datasetId: string,
    number: number,
    keys: TreeKeys,
    groupValue: string,
    maxDepth: number,
    after: TreeCursor | null,
    limit: number,
  ): Promise<TreeRow[]> {
    const at = (alias: string, key: string) => sql<string>`${sql.ref(`${alias}.data`)} ->> ${keyLiteral(key)}`;
    const rows = await this.db.typed((q) =>
      q
        .withRecursive('tree(id, sort, ordinal, depth)', (c) =>
          c
            .selectFrom('dataset_rows as r')
            .select([at('r', keys.id).as('id'), at('r', keys.sort).as('sort'), 'r.ordinal', sql<number>`1`.as('depth')])
            .where((eb) => eb.and(this.ofGroup('r', datasetId, number, keys, groupValue)))
            .where(this.isRoot('r', datasetId, number, keys, groupValue))
            .unionAll((u) =>
              u
                .selectFrom('tree as t')
                // LATERAL: each row's children looked up by the parent index, whatever the
                // statistics say of a trace that has just landed.
                .innerJoinLateral(
                  (eb) =>
                    eb
                      .selectFrom('dataset_rows as k')
                      .select([at('k', keys.id).as('id'), at('k', keys.sort).as('sort'), 'k.ordinal'])
                      .where((w) => w.and(this.ofGroup('k', datasetId, number, keys, groupValue)))
                      .where(at('k', keys.parent), '=', sql.ref<string>('t.id'))
                      .where(at('k', keys.id), '<>', sql.ref<string>('t.id'))
                      // A fence: not pulled up into a join the statistics of a fresh trace would plan as a scan per row.
                      .offset(0)
                      .as('k'),
                  (j) => j.onTrue(),
                )
                .select(['k.id', 'k.sort', 'k.ordinal', sql<number>`t.depth + 1`.as('depth')])
                .where('t.depth', '<', maxDepth),
            ),
        )
        // The page first, so that only its rows are read whole and counted.
        .with('page', (c) =>
          c
            .selectFrom('tree as t')
            .selectAll()
            .$if(after !== null, (s) =>
              s.where(sql<SqlBool>`(t.depth, t.sort, t.id) > (${after!.depth ?? 0}, ${after!.sort}, ${after!.id})`),
            )
            .orderBy('t.depth')
            .orderBy('t.sort')
            .orderBy('t.id')
            .limit(limit),
        )
        .selectFrom('page as g')
        .innerJoin('dataset_rows as r', (j) =>
          j.on('r.dataset_id', '=', datasetId).onRef('r.ordinal', '=', 'g.ordinal'),
        )
        .select(['r.data', 'g.depth', this.childCount('r', number, keys).as('child_count')])
        .orderBy('g.depth')
        .orderBy('g.sort')
        .orderBy('g.id'),
    );
    return rows.map((r) => ({
      data: r.data as Record<string, unknown>,
      child_count: r.child_count ?? 0,
      depth: Number(r.depth),
    }));
  }

  /** Whether the tree of `groupValue` holds a row named `id` in version `number`. */
  @GenerateSql({
    params: [
      DummyValue.UUID,
      1,
      { group: 'trace_id', id: 'span_id', parent: 'parent_span_id', sort: 'start_time' },
      DummyValue.STRING,
      DummyValue.STRING,
    ],
  })
  async holds(datasetId: string, number: number, keys: TreeKeys, groupValue: string, id: string): Promise<boolean> {
    const at = (key: string) => sql<string>`r.data ->> ${keyLiteral(key)}`;
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('dataset_rows as r')
        .select(sql<number>`1`.as('held'))
        .where('r.dataset_id', '=', datasetId)
        .where(this.inTree('r', keys))
        .where(shownIn('r', number))
        .where(at(keys.group), '=', groupValue)
        .where(at(keys.id), '=', id)
        .limit(1),
    );
    return rows.length > 0;
  }

  /** The rows of the group `alias` stands for: the dataset, the version, the partial indexes' predicate, the group's value. */
  private ofGroup(alias: string, datasetId: string, number: number, keys: TreeKeys, groupValue: string) {
    return [
      sql<SqlBool>`${sql.ref(`${alias}.dataset_id`)} = ${datasetId}`,
      this.inTree(alias, keys),
      shownIn(alias, number),
      sql<SqlBool>`${sql.ref(`${alias}.data`)} ->> ${keyLiteral(keys.group)} = ${groupValue}`,
    ];
  }

  /** How many rows of the version hang directly under row `alias` (an index range of dataset_rows_span_parent_idx). */
  private childCount(alias: string, number: number, keys: TreeKeys) {
    const of = (a: string, key: string) => sql<string>`${sql.ref(`${a}.data`)} ->> ${keyLiteral(key)}`;
    return sql<number>`(SELECT count(*)::int FROM dataset_rows c
      WHERE c.dataset_id = ${sql.ref(`${alias}.dataset_id`)} AND ${this.inTree('c', keys)} AND ${shownIn('c', number)}
        AND ${of('c', keys.group)} = ${of(alias, keys.group)}
        AND ${of('c', keys.parent)} = ${of(alias, keys.id)} AND ${of('c', keys.id)} <> ${of(alias, keys.id)})`;
  }

  /**
   * Row `alias` is a root: no parent, itself as parent, or a parent the group does not hold. The
   * group's ids are one uncorrelated NOT IN, which PostgreSQL hashes once for the statement.
   */
  private isRoot(alias: string, datasetId: string, number: number, keys: TreeKeys, groupValue: string) {
    const parent = sql<string>`${sql.ref(`${alias}.data`)} ->> ${keyLiteral(keys.parent)}`;
    const id = sql<string>`${sql.ref(`${alias}.data`)} ->> ${keyLiteral(keys.id)}`;
    const groupIds = sql`SELECT h.data ->> ${keyLiteral(keys.id)} FROM dataset_rows h
      WHERE ${sql.join(this.ofGroup('h', datasetId, number, keys, groupValue), sql` AND `)}
        AND h.data ->> ${keyLiteral(keys.id)} IS NOT NULL`;
    return sql<SqlBool>`(${parent} IS NULL OR ${parent} = '' OR ${parent} = ${id} OR ${parent} NOT IN (${groupIds}))`;
  }

  /** `alias.data ? '<group>' AND alias.data ? '<id>'`: the predicate the partial indexes over trees' rows have. */
  private inTree(alias: string, keys: TreeKeys) {
    const data = sql.ref(`${alias}.data`);
    return sql<SqlBool>`(${data} ? ${keyLiteral(keys.id)} AND ${data} ? ${keyLiteral(keys.group)})`;
  }
}
