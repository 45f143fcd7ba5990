import { Injectable } from '@nestjs/common';
import type { Expression, ExpressionBuilder, Insertable, Selectable, SqlBool } from 'kysely';
import { DummyValue, GenerateSql } from '#libs/database/generate-sql.js';
import type { DB, TraceFeedback } from '#libs/database/schema.js';
import { countN } from '#libs/database/typed-fragments.js';
import { Db } from '#libs/database/unit-of-work.js';

export type FeedbackRow = Selectable<TraceFeedback>;
export type NewFeedbackRow = Insertable<TraceFeedback> & { workspace_id: string; trace_id: string; name: string };

/** The filters of GET /traces/feedback, as the service read them. */
export interface FeedbackFilter {
  traceId?: string;
  spanId?: string;
  name?: string;
  /** Equal to: the boolean, number or text each kind of value may be. */
  equals?: { boolean?: boolean; number?: number; text: string };
  minValue?: number;
  maxValue?: number;
  userRef?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

/** What `traceIdsWithFeedback` selects: feedback of one name, a value equal to one or scores in a range. */
export interface FeedbackPick {
  name: string;
  value?: number | boolean | string;
  min?: number;
  max?: number;
  limit: number;
}

/** Counts and the mean as the database answers them (bigint and numeric arrive as text). */
export interface FeedbackCounts {
  trace_id: string;
  name: string;
  count: number | string;
  mean: number | string | null;
  thumbs_up: number | string;
  thumbs_down: number | string;
}

/** A value asked for as text (a query string's) as each kind of feedback value may equal it. */
export function feedbackEquality(text: string): NonNullable<FeedbackFilter['equals']> {
  return {
    text,
    boolean: text === 'true' ? true : text === 'false' ? false : undefined,
    number: text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : undefined,
  };
}

type Where = (eb: ExpressionBuilder<DB, 'trace_feedback'>) => Expression<SqlBool>;

/** Trace feedback (trace_feedback): always read and written with its workspace. */
@Injectable()
export class FeedbackRepository {
  constructor(private readonly db: Db) {}

  /**
   * Stores the feedback; with a `client_key` already held by the workspace, stores nothing and
   * answers the record that holds it (`created: false`). The unique index decides between
   * parallel posts of one key: every one but the first finds the first's record.
   */
  async insert(row: NewFeedbackRow): Promise<{ row: FeedbackRow; created: boolean }> {
    const [created] = await this.db.typed((q) =>
      q
        .insertInto('trace_feedback')
        .values(row)
        .onConflict((oc) => oc.columns(['workspace_id', 'client_key']).doNothing())
        .returningAll(),
    );
    if (created) return { row: created, created: true };
    const [existing] = await this.db.typed((q) =>
      q
        .selectFrom('trace_feedback')
        .selectAll()
        .where('workspace_id', '=', row.workspace_id)
        .where('client_key', '=', row.client_key!),
    );
    return { row: existing, created: false };
  }

  async find(workspaceId: string, id: string): Promise<FeedbackRow | null> {
    const [row] = await this.db.typed((q) =>
      q.selectFrom('trace_feedback').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id),
    );
    return row ?? null;
  }

  async remove(workspaceId: string, id: string): Promise<boolean> {
    const deleted = await this.db.typed((q) =>
      q.deleteFrom('trace_feedback').where('workspace_id', '=', workspaceId).where('id', '=', id).returning('id'),
    );
    return deleted.length > 0;
  }

  /** A page of the workspace's feedback that `filter` keeps, by creation time (then id), with the total. */
  async page(
    workspaceId: string,
    filter: FeedbackFilter,
    order: 'asc' | 'desc',
    window: { skip: number; take: number },
  ): Promise<{ rows: FeedbackRow[]; total: number }> {
    const conditions = feedbackConditions(filter);
    const matching = () =>
      this.db.typed((q) =>
        conditions
          .reduce(
            (query, condition) => query.where(condition),
            q.selectFrom('trace_feedback').where('workspace_id', '=', workspaceId),
          )
          .select(countN()),
      );
    const rows = await this.db.typed((q) =>
      conditions
        .reduce(
          (query, condition) => query.where(condition),
          q.selectFrom('trace_feedback').selectAll().where('workspace_id', '=', workspaceId),
        )
        .orderBy('created_at', order)
        .orderBy('id', order)
        .limit(window.take)
        .offset(window.skip),
    );
    const [{ n }] = await matching();
    return { rows, total: n };
  }

  /** Per trace and name: how many, the mean score, thumbs up and down, for the traces named. */
  @GenerateSql({ params: [DummyValue.UUID, ['4bf92f3577b34da6a3ce929d0e0e4736', '5b8efff798038103d269b633813fc60c']] })
  countsFor(workspaceId: string, traceIds: string[]): Promise<FeedbackCounts[]> {
    if (!traceIds.length) return Promise.resolve([]);
    return this.db.typed((q) =>
      q
        .selectFrom('trace_feedback')
        .where('workspace_id', '=', workspaceId)
        .where('trace_id', 'in', traceIds)
        .groupBy(['trace_id', 'name'])
        .select((eb) => [
          'trace_id',
          'name',
          eb.fn.countAll<string>().as('count'),
          eb.fn.avg<string | null>('value_number').as('mean'),
          eb.fn.countAll<string>().filterWhere('value_boolean', '=', true).as('thumbs_up'),
          eb.fn.countAll<string>().filterWhere('value_boolean', '=', false).as('thumbs_down'),
        ])
        .orderBy('trace_id')
        .orderBy('name'),
    );
  }

  /**
   * The traces (and spans) with feedback that `pick` selects, each once, first by the trace id
   * and then by the span id (a trace's own feedback, without a span, first): the same answer for
   * the same records whatever order they were posted in.
   */
  @GenerateSql(
    { name: 'a thumbs down', params: [DummyValue.UUID, { name: 'thumbs', value: false, limit: 100 }] },
    { name: 'scores in a range', params: [DummyValue.UUID, { name: 'user_rating', min: 1, max: 2, limit: 100 }] },
  )
  pick(workspaceId: string, pick: FeedbackPick): Promise<Array<{ trace_id: string; span_id: string | null }>> {
    return this.db.typed((q) =>
      pickConditions(pick)
        .reduce(
          (query, condition) => query.where(condition),
          q.selectFrom('trace_feedback').where('workspace_id', '=', workspaceId).where('name', '=', pick.name),
        )
        .select(['trace_id', 'span_id'])
        .groupBy(['trace_id', 'span_id'])
        .orderBy('trace_id')
        .orderBy((eb) => eb.fn.coalesce('span_id', eb.val('')))
        .limit(pick.limit),
    );
  }
}

function feedbackConditions(filter: FeedbackFilter): Where[] {
  const out: Where[] = [];
  if (filter.traceId !== undefined) out.push((eb) => eb('trace_id', '=', filter.traceId!));
  if (filter.spanId !== undefined) out.push((eb) => eb('span_id', '=', filter.spanId!));
  if (filter.name !== undefined) out.push((eb) => eb('name', '=', filter.name!));
  if (filter.userRef !== undefined) out.push((eb) => eb('user_ref', '=', filter.userRef!));
  if (filter.createdAfter) out.push((eb) => eb('created_at', '>=', filter.createdAfter!));
  if (filter.createdBefore) out.push((eb) => eb('created_at', '<', filter.createdBefore!));
  if (filter.minValue !== undefined) out.push((eb) => eb('value_number', '>=', filter.minValue!));
  if (filter.maxValue !== undefined) out.push((eb) => eb('value_number', '<=', filter.maxValue!));
  const equals = filter.equals;
  if (equals)
    out.push((eb) =>
      eb.or([
        eb('value_string', '=', equals.text),
        ...(equals.boolean !== undefined ? [eb('value_boolean', '=', equals.boolean)] : []),
        ...(equals.number !== undefined ? [eb('value_number', '=', equals.number)] : []),
      ]),
    );
  return out;
}

function pickConditions(pick: FeedbackPick): Where[] {
  const out: Where[] = [];
  const { value } = pick;
  if (typeof value === 'boolean') out.push((eb) => eb('value_boolean', '=', value));
  if (typeof value === 'number') out.push((eb) => eb('value_number', '=', value));
  if (typeof value === 'string') out.push((eb) => eb('value_string', '=', value));
  if (pick.min !== undefined) out.push((eb) => eb('value_number', '>=', pick.min!));
  if (pick.max !== undefined) out.push((eb) => eb('value_number', '<=', pick.max!));
  return out;
}
