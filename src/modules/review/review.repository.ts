import { Injectable } from '@nestjs/common';
import { sql, type Selectable, type Updateable } from 'kysely';
import type { DB } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';
import { countOf, withTotal, type PageWindow } from '#libs/database/typed-fragments.js';
import type { RowSource } from '../datasets/dataset-writes.types.js';
import type { LabelValues, RubricField } from './review.rules.js';

export type QueueRow = Selectable<DB['review_queues']>;
export type QueueChanges = Omit<Updateable<DB['review_queues']>, 'id' | 'workspace_id' | 'created_at' | 'updated_at'>;
export type ItemState = 'pending' | 'final' | 'disagreement';
export type ItemRow = Omit<Selectable<DB['review_items']>, 'context' | 'final_label' | 'state' | 'final_source'> & {
  context: Record<string, unknown>;
  final_label: LabelValues | null;
  state: ItemState;
  final_source: 'consensus' | 'adjudication' | null;
};
export interface LabelChangeRow {
  values: LabelValues | null;
  by: string;
  at: string;
}
export type LabelRow = Omit<Selectable<DB['review_labels']>, 'values' | 'history' | 'kind'> & {
  kind: 'label' | 'skip';
  values: LabelValues | null;
  history: LabelChangeRow[];
};
export interface RubricRow {
  version: number;
  fields: RubricField[];
  created_by: string | null;
  created_at: Date;
}

/** A new item: its reference into the source and its context snapshot. */
export interface NewItem {
  ref: string;
  context: Record<string, unknown>;
}

/** Review queues, their rubric versions, items, slots and labels: queries only. */
@Injectable()
export class ReviewRepository {
  constructor(private readonly db: Db) {}

  // Queues

  async insertQueue(
    values: Omit<
      DB['review_queues'],
      'id' | 'created_at' | 'updated_at' | 'state' | 'rubric_version' | 'description' | 'show_verdicts'
    > & {
      description: string;
      show_verdicts: boolean;
    },
  ): Promise<QueueRow> {
    const [row] = await this.db.typed((q) => q.insertInto('review_queues').values(values).returningAll());
    return row;
  }

  async findQueue(workspaceId: string, id: string, lock = false): Promise<QueueRow | null> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('review_queues')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .$if(lock, (w) => w.forUpdate()),
    );
    return row ?? null;
  }

  async pageQueues(workspaceId: string, state: string | undefined, window: PageWindow): Promise<[QueueRow[], number]> {
    const matching = () =>
      this.db.typed((q) =>
        q
          .selectFrom('review_queues')
          .selectAll()
          .where('workspace_id', '=', workspaceId)
          .$if(!!state, (w) => w.where('state', '=', state!))
          .orderBy('created_at', 'desc')
          .orderBy('id')
          .offset(window.skip)
          .limit(window.take),
      );
    return withTotal(await matching(), window, () =>
      countOf(this.db, (q) =>
        q
          .selectFrom('review_queues')
          .where('workspace_id', '=', workspaceId)
          .$if(!!state, (w) => w.where('state', '=', state!)),
      ),
    );
  }

  async updateQueue(id: string, changes: QueueChanges): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('review_queues')
        .set({ ...changes, updated_at: sql<Date>`now()` })
        .where('id', '=', id),
    );
  }

  async deleteQueue(id: string): Promise<void> {
    await this.db.typedWrite((q) => q.deleteFrom('review_queues').where('id', '=', id));
  }

  // Rubric versions

  async insertRubric(queueId: string, version: number, fields: RubricField[], createdBy: string | null): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .insertInto('review_rubric_versions')
        .values({ queue_id: queueId, version, fields: JSON.stringify(fields), created_by: createdBy }),
    );
  }

  async rubrics(queueId: string, version?: number): Promise<RubricRow[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('review_rubric_versions')
        .select(['version', 'fields', 'created_by', 'created_at'])
        .where('queue_id', '=', queueId)
        .$if(version !== undefined, (w) => w.where('version', '=', version!))
        .orderBy('version'),
    );
    return rows as unknown as RubricRow[];
  }

  // Items

  /** Inserts the items the queue does not have (by ref), after its last position; answers how many were added. */
  async insertItems(workspaceId: string, queueId: string, items: NewItem[]): Promise<number> {
    if (!items.length) return 0;
    const [{ last }] = await this.db.typed((q) =>
      q
        .selectFrom('review_items')
        .select((eb) => eb.fn.coalesce(eb.fn.max('position'), sql<string>`0`).as('last'))
        .where('queue_id', '=', queueId),
    );
    const start = Number(last);
    const inserted = await this.db.typed((q) =>
      q
        .insertInto('review_items')
        .values(
          items.map((item, i) => ({
            workspace_id: workspaceId,
            queue_id: queueId,
            position: String(start + i + 1),
            ref: item.ref,
            context: JSON.stringify(item.context),
          })),
        )
        .onConflict((oc) => oc.columns(['queue_id', 'ref']).doNothing())
        .returning('id'),
    );
    return inserted.length;
  }

  /** Of `refs`, those the queue already has. */
  async presentRefs(queueId: string, refs: string[]): Promise<Set<string>> {
    if (!refs.length) return new Set();
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('review_items')
        .select('ref')
        .where('queue_id', '=', queueId)
        .where('ref', '=', sql<string>`ANY(${refs}::text[])`),
    );
    return new Set(rows.map((r) => r.ref));
  }

  async itemCounts(queueIds: string[]): Promise<Map<string, Record<ItemState, number>>> {
    if (!queueIds.length) return new Map();
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('review_items')
        .select(['queue_id', 'state', sql<number>`count(*)::int`.as('n')])
        .where('queue_id', '=', sql<string>`ANY(${queueIds}::uuid[])`)
        .groupBy(['queue_id', 'state']),
    );
    const counts = new Map<string, Record<ItemState, number>>();
    for (const r of rows) {
      const c = counts.get(r.queue_id) ?? { pending: 0, final: 0, disagreement: 0 };
      c[r.state as ItemState] = r.n;
      counts.set(r.queue_id, c);
    }
    return counts;
  }

  async findItem(queueId: string, itemId: string, lock = false): Promise<ItemRow | null> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('review_items')
        .selectAll()
        .where('queue_id', '=', queueId)
        .where('id', '=', itemId)
        .$if(lock, (w) => w.forUpdate()),
    );
    return (row as unknown as ItemRow | undefined) ?? null;
  }

  async pageItems(queueId: string, state: ItemState | undefined, window: PageWindow): Promise<[ItemRow[], number]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('review_items')
        .selectAll()
        .where('queue_id', '=', queueId)
        .$if(!!state, (w) => w.where('state', '=', state!))
        .orderBy('position')
        .offset(window.skip)
        .limit(window.take),
    );
    return withTotal(rows as unknown as ItemRow[], window, () =>
      countOf(this.db, (q) =>
        q
          .selectFrom('review_items')
          .where('queue_id', '=', queueId)
          .$if(!!state, (w) => w.where('state', '=', state!)),
      ),
    );
  }

  /** Every item of the queue in position order (bounded by what a queue can hold). */
  async allItems(queueId: string): Promise<ItemRow[]> {
    const rows = await this.db.typed((q) =>
      q.selectFrom('review_items').selectAll().where('queue_id', '=', queueId).orderBy('position'),
    );
    return rows as unknown as ItemRow[];
  }

  async setItemOutcome(
    itemId: string,
    outcome: {
      state: ItemState;
      labelled?: number;
      final_label: LabelValues | null;
      final_source: 'consensus' | 'adjudication' | null;
      final_rubric_version: number | null;
      adjudicated_by?: string | null;
    },
  ): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('review_items')
        .set({
          ...outcome,
          final_label: outcome.final_label === null ? null : JSON.stringify(outcome.final_label),
          finalised_at: outcome.final_label === null ? null : sql<Date>`now()`,
        })
        .where('id', '=', itemId),
    );
  }

  // Slots and leases

  /** Frees the queue's slots whose lease has run out. */
  async freeExpired(queueId: string): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .deleteFrom('review_slots')
        .where('expires_at', '<', sql<Date>`now()`)
        .where('item_id', 'in', (s) => s.selectFrom('review_items').select('id').where('queue_id', '=', queueId)),
    );
  }

  /** The item of the queue the reviewer holds a live lease on, with the lease's end. */
  async heldLease(queueId: string, reviewerId: string): Promise<{ item_id: string; expires_at: Date } | null> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('review_slots as s')
        .innerJoin('review_items as i', 'i.id', 's.item_id')
        .select(['s.item_id', 's.expires_at'])
        .where('i.queue_id', '=', queueId)
        .where('i.state', '=', 'pending')
        .where('s.reviewer_id', '=', reviewerId)
        .where('s.expires_at', '>', sql<Date>`now()`)
        .orderBy('i.position')
        .limit(1),
    );
    return row ? { item_id: row.item_id, expires_at: row.expires_at! } : null;
  }

  /**
   * Up to `limit` items that need a label, that the reviewer has neither labelled, skipped nor
   * holds, with a free slot as this statement sees them, in queue order, and the slots taken.
   */
  async candidates(
    queueId: string,
    reviewerId: string,
    overlap: number,
    limit: number,
  ): Promise<Array<{ id: string; taken: number[] }>> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('review_items as i')
        .select([
          'i.id',
          (eb) =>
            eb
              .fn<number[]>('array', [
                eb
                  .selectFrom('review_slots as s')
                  .select('s.slot')
                  .whereRef('s.item_id', '=', 'i.id')
                  .where((w) => w.or([w('s.expires_at', 'is', null), w('s.expires_at', '>', sql<Date>`now()`)])),
              ])
              .as('taken'),
        ])
        .where('i.queue_id', '=', queueId)
        .where('i.state', '=', 'pending')
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('review_labels as l')
                .select('l.id')
                .whereRef('l.item_id', '=', 'i.id')
                .where('l.reviewer_id', '=', reviewerId),
            ),
          ),
        )
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('review_slots as s')
                .select('s.slot')
                .whereRef('s.item_id', '=', 'i.id')
                .where('s.reviewer_id', '=', reviewerId),
            ),
          ),
        )
        .where(
          (eb) =>
            eb
              .selectFrom('review_slots as s')
              .select(sql<number>`count(*)::int`.as('n'))
              .whereRef('s.item_id', '=', 'i.id')
              .where((w) => w.or([w('s.expires_at', 'is', null), w('s.expires_at', '>', sql<Date>`now()`)])),
          '<',
          overlap,
        )
        .orderBy('i.position')
        .limit(limit),
    );
    return rows.map((r) => ({ id: r.id, taken: r.taken.map(Number) }));
  }

  /**
   * Takes `slot` of the item for the reviewer until `seconds` from now; false when someone took it
   * first (the primary key decides: a concurrent insert of the same slot waits for the other's
   * commit and then does nothing) or the reviewer already holds a slot of the item.
   */
  async takeSlot(itemId: string, slot: number, reviewerId: string, seconds: number): Promise<Date | null> {
    const rows = await this.db.typed((q) =>
      q
        .insertInto('review_slots')
        .values({
          item_id: itemId,
          slot,
          reviewer_id: reviewerId,
          expires_at: sql<Date>`now() + make_interval(secs => ${seconds})`,
        })
        .onConflict((oc) => oc.doNothing())
        .returning('expires_at'),
    );
    return rows.length ? rows[0].expires_at : null;
  }

  /** The reviewer's live lease on the item, locked; null when there is none. */
  async liveLease(itemId: string, reviewerId: string): Promise<{ slot: number } | null> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('review_slots')
        .select('slot')
        .where('item_id', '=', itemId)
        .where('reviewer_id', '=', reviewerId)
        .where('expires_at', '>', sql<Date>`now()`)
        .forUpdate(),
    );
    return row ?? null;
  }

  /** The reviewer's slot now holds their label (it no longer expires). */
  async keepSlot(itemId: string, reviewerId: string): Promise<void> {
    await this.db.typedWrite((q) =>
      q
        .updateTable('review_slots')
        .set({ expires_at: null })
        .where('item_id', '=', itemId)
        .where('reviewer_id', '=', reviewerId),
    );
  }

  /** Frees the reviewer's leased (unlabelled) slot of the item; answers whether there was one. */
  async releaseSlot(itemId: string, reviewerId: string): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q
        .deleteFrom('review_slots')
        .where('item_id', '=', itemId)
        .where('reviewer_id', '=', reviewerId)
        .where('expires_at', 'is not', null)
        .returning('slot'),
    );
    return rows.length > 0;
  }

  // Labels

  async insertLabel(values: {
    item_id: string;
    queue_id: string;
    reviewer_id: string;
    kind: 'label' | 'skip';
    values: LabelValues | null;
    reason: string | null;
    rubric_version: number;
  }): Promise<LabelRow> {
    const [row] = await this.db.typed((q) =>
      q
        .insertInto('review_labels')
        .values({ ...values, values: values.values === null ? null : JSON.stringify(values.values) })
        .returningAll(),
    );
    return row as unknown as LabelRow;
  }

  async findLabel(itemId: string, reviewerId: string, lock = false): Promise<LabelRow | null> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('review_labels')
        .selectAll()
        .where('item_id', '=', itemId)
        .where('reviewer_id', '=', reviewerId)
        .$if(lock, (w) => w.forUpdate()),
    );
    return (row as unknown as LabelRow | undefined) ?? null;
  }

  async updateLabel(
    id: string,
    values: LabelValues,
    rubricVersion: number,
    history: LabelChangeRow[],
  ): Promise<LabelRow> {
    const [row] = await this.db.typed((q) =>
      q
        .updateTable('review_labels')
        .set({
          values: JSON.stringify(values),
          rubric_version: rubricVersion,
          history: JSON.stringify(history),
          updated_at: sql<Date>`clock_timestamp()`,
        })
        .where('id', '=', id)
        .returningAll(),
    );
    return row as unknown as LabelRow;
  }

  /** The labels (not skips) of some items, by item then when given. */
  async labelsOf(itemIds: string[]): Promise<LabelRow[]> {
    if (!itemIds.length) return [];
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('review_labels')
        .selectAll()
        .where('item_id', '=', sql<string>`ANY(${itemIds}::uuid[])`)
        .where('kind', '=', 'label')
        .orderBy('item_id')
        .orderBy('created_at')
        .orderBy('id'),
    );
    return rows as unknown as LabelRow[];
  }

  /** Every label (not skip) of the queue: item, reviewer and values. */
  async queueLabels(queueId: string): Promise<Array<{ item_id: string; reviewer_id: string; values: LabelValues }>> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('review_labels')
        .select(['item_id', 'reviewer_id', 'values'])
        .where('queue_id', '=', queueId)
        .where('kind', '=', 'label')
        .orderBy('reviewer_id'),
    );
    return rows as Array<{ item_id: string; reviewer_id: string; values: LabelValues }>;
  }

  // Exports

  /**
   * The queue's finally labelled items as rows for the datasets family to append in its own
   * statement (DatasetWritesService.appendFrom): the row id is the item's id (an item exported
   * twice is written once), the data the item's input, expected output and output with the
   * label's fields as columns `label_<field>`, plus the reference.
   */
  finalLabelSource(queueId: string, fields: string[]): RowSource {
    return (q) =>
      q.with('sourced_rows', (w) =>
        w
          .selectFrom('review_items')
          .select([
            'id as row_id',
            sql<string>`jsonb_strip_nulls(jsonb_build_object(
              'input', context->'input', 'expected_output', context->'expected_output', 'output', context->'output',
              'review_ref', to_jsonb(ref), 'review_queue_id', to_jsonb(queue_id)
            )) || coalesce((SELECT jsonb_object_agg('label_' || f.key, f.value) FROM jsonb_each(final_label) f
              WHERE f.key = ANY(${fields}::text[])), '{}'::jsonb)`.as('data'),
            sql<string>`row_number() OVER (ORDER BY position)`.as('place'),
          ])
          .where('queue_id', '=', queueId)
          .where('state', '=', 'final'),
      );
  }
}
