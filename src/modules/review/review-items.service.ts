import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { Xoshiro128 } from '#libs/evaluation/statistics/bootstrap.js';
import { QueryService } from '../datasets/rows/query.service.js';
import { VersionsService } from '../datasets/versions/versions.service.js';
import type { DatasetVersionEntity } from '../datasets/entities/dataset-version.entity.js';
import type { RowQueryRequest } from '../datasets/dto/query.dto.js';
import { RunReadService } from '../runs/run-read.service.js';
import {
  MAX_FILTER_CANDIDATES,
  MAX_ITEMS_PER_REQUEST,
  type AddReviewItemsRequest,
  type AddReviewItemsResponse,
  type FeedbackSelectionDto,
} from './dto/review.dto.js';
import { TraceFeedbackService } from '../traces/feedback/feedback.service.js';
import { ReviewErrors } from './review.errors.js';
import { ReviewQueuesService } from './review-queues.service.js';
import { ReviewRepository, type NewItem, type QueueRow } from './review.repository.js';

/** A snapshot's text values are cut to this many characters. */
const MAX_CONTEXT_TEXT = 4000;
/** Spans a trace or session item keeps in its snapshot, at most. */
const MAX_CONTEXT_SPANS = 50;
/** Rows a page of the source is read in. */
const PAGE = 1000;

type Row = Record<string, unknown>;

/** Adds items to a queue: by a filter (with a seeded sample), by ids, or from a run's failures. */
@Injectable()
export class ReviewItemsService {
  constructor(
    private readonly review: ReviewRepository,
    private readonly queues: ReviewQueuesService,
    private readonly versions: VersionsService,
    private readonly query: QueryService,
    private readonly runs: RunReadService,
    private readonly feedback: TraceFeedbackService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  async add(
    access: WorkspaceAccess,
    queueId: string,
    body: AddReviewItemsRequest,
    caller: Principal,
  ): Promise<AddReviewItemsResponse> {
    const given = [body.filter, body.ids, body.run_failures, body.feedback].filter((x) => x !== undefined);
    const refuse = (detail: string) => new DomainError(ReviewErrors.item_selection_invalid, detail);
    if (given.length !== 1) throw refuse('Give exactly one of filter, ids, run_failures or feedback');
    if (body.sample && body.filter === undefined && body.feedback === undefined)
      throw refuse('sample goes with filter or feedback');
    return this.transactions.run(async () => {
      const queue = await this.queues.require(access, queueId, true);
      if (queue.state !== 'open') throw new DomainError(ReviewErrors.queue_closed, `Queue ${queue.name} is closed`);
      if (body.run_failures && queue.source_kind !== 'run') throw refuse('run_failures needs a run source');
      if (body.feedback && queue.source_kind !== 'traces' && queue.source_kind !== 'sessions')
        throw refuse('feedback needs a traces or sessions source');
      const { items, notFound } = await this.select(access, queue, body);
      const present = await this.review.presentRefs(
        queue.id,
        items.map((i) => i.ref),
      );
      const fresh = items.filter((i) => !present.has(i.ref));
      const added = await this.review.insertItems(access.workspaceId, queue.id, fresh);
      const counts = (await this.review.itemCounts([queue.id])).get(queue.id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'review_queue.items_added',
        targetType: 'review_queue',
        targetId: queue.id,
        details: { added, skipped: items.length - added },
      });
      return {
        added,
        skipped: items.length - added,
        not_found: notFound,
        total: counts ? counts.pending + counts.final + counts.disagreement : 0,
      };
    });
  }

  /**
   * For families that route traces into a queue (online evaluation): the kind of the workspace's
   * open queue when it is a `traces` or `sessions` queue over a version of `datasetId`, else null.
   */
  async traceQueueKind(workspaceId: string, queueId: string, datasetId: string): Promise<'traces' | 'sessions' | null> {
    const queue = await this.review.findQueue(workspaceId, queueId);
    if (!queue || queue.state !== 'open' || (queue.source_kind !== 'traces' && queue.source_kind !== 'sessions'))
      return null;
    const version = await this.versions.findById(workspaceId, queue.source_id);
    return version?.datasetId === datasetId ? queue.source_kind : null;
  }

  /**
   * Adds traces (or sessions) as items of the queue, each with its spans as context, inside the
   * caller's unit of work; those the queue holds already are left. Answers how many were added
   * (none when the queue is gone or closed).
   */
  async addFromSpans(workspaceId: string, queueId: string, groups: Map<string, Row[]>): Promise<number> {
    const queue = await this.review.findQueue(workspaceId, queueId, true);
    if (!queue || queue.state !== 'open' || !groups.size) return 0;
    const key = queue.source_kind === 'sessions' ? 'session_id' : 'trace_id';
    const present = await this.review.presentRefs(queue.id, [...groups.keys()]);
    const fresh = [...groups].filter(([ref]) => !present.has(ref));
    return this.review.insertItems(
      workspaceId,
      queue.id,
      fresh.map(([ref, spans]) => ({ ref, context: traceContext(key, spans) })),
    );
  }

  /** The items the request selects, with their context, and the ids named that the source lacks. */
  private async select(
    access: WorkspaceAccess,
    queue: QueueRow,
    body: AddReviewItemsRequest,
  ): Promise<{ items: NewItem[]; notFound: string[] }> {
    if (queue.source_kind === 'run') return this.selectRunRows(access, queue, body);
    const version = (await this.versions.findById(access.workspaceId, queue.source_id))!;
    if (queue.source_kind === 'dataset_version') {
      const filter = body.ids ? { field: '_row_id', op: 'in', value: uuidsOf(body.ids) } : body.filter!;
      let rows = await this.readRows(version, filter, body.ids ? '/ids' : '/filter');
      if (body.sample) rows = sample(rows, body.sample.size, body.sample.seed);
      rows = rows.slice(0, MAX_ITEMS_PER_REQUEST);
      const found = new Set(rows.map((r) => String(r._row_id)));
      return {
        items: rows.map((r) => ({ ref: String(r._row_id), context: rowContext(version, r) })),
        notFound: body.ids ? body.ids.filter((id) => !found.has(id.toLowerCase())) : [],
      };
    }
    // traces / sessions: a filter selects spans; the item is their trace (or session).
    const key = queue.source_kind === 'traces' ? 'trace_id' : 'session_id';
    let refs: string[];
    if (body.ids) refs = [...new Set(body.ids)];
    else if (body.feedback) {
      refs = await this.withFeedback(access, version, key, body.feedback);
      if (body.sample) refs = sample(refs, body.sample.size, body.sample.seed);
    } else {
      const spans = await this.readRows(version, body.filter!, '/filter', [key]);
      refs = [...new Set(spans.map((s) => s[key]).filter((v): v is string => typeof v === 'string' && v !== ''))];
      if (body.sample) refs = sample(refs, body.sample.size, body.sample.seed);
    }
    refs = refs.slice(0, MAX_ITEMS_PER_REQUEST);
    const spans = new Map<string, Row[]>();
    for (let i = 0; i < refs.length; i += PAGE) {
      const chunk = refs.slice(i, i + PAGE);
      for (const s of await this.readRows(version, { field: key, op: 'in', value: chunk }, '/ids'))
        spans.set(String(s[key]), [...(spans.get(String(s[key])) ?? []), s]);
    }
    return {
      items: refs.filter((r) => spans.has(r)).map((r) => ({ ref: r, context: traceContext(key, spans.get(r)!) })),
      notFound: refs.filter((r) => !spans.has(r)),
    };
  }

  /**
   * The traces of the version with such feedback (through the traces family), or the sessions of
   * those traces, in trace id order: at most MAX_FILTER_CANDIDATES traces are looked at.
   */
  private async withFeedback(
    access: WorkspaceAccess,
    version: DatasetVersionEntity,
    key: 'trace_id' | 'session_id',
    selection: FeedbackSelectionDto,
  ): Promise<string[]> {
    const picked = await this.feedback.traceIdsWithFeedback(access.workspaceId, {
      ...selection,
      limit: MAX_FILTER_CANDIDATES,
    });
    const traceIds = [...new Set(picked.map((p) => p.trace_id))];
    const refs = new Set<string>();
    for (let i = 0; i < traceIds.length; i += PAGE) {
      const filter = { field: 'trace_id', op: 'in', value: traceIds.slice(i, i + PAGE) };
      for (const s of await this.readRows(version, filter, '/feedback', ['trace_id', 'session_id'])) {
        const ref = s[key];
        if (typeof ref === 'string' && ref !== '') refs.add(ref);
      }
    }
    return [...refs];
  }

  /** Rows of a version a filter matches, in row order, up to MAX_FILTER_CANDIDATES (errors of the filter point under `root`). */
  async readRows(
    version: DatasetVersionEntity,
    filter: Record<string, unknown>,
    root: string,
    select?: string[],
  ): Promise<Row[]> {
    const rows: Row[] = [];
    let cursor: string | undefined;
    do {
      const request = {
        filter,
        limit: PAGE,
        include_total: false,
        ...(select ? { select } : {}),
        ...(cursor ? { cursor } : {}),
      } as RowQueryRequest;
      let page;
      try {
        page = await this.query.query(version, request);
      } catch (err) {
        if (err instanceof DomainError && err.code === 'invalid_filter')
          throw new DomainError(ReviewErrors.item_selection_invalid, `${root}: ${err.detail}`);
        throw err;
      }
      rows.push(...(page.items as Row[]));
      cursor = page.next_cursor ?? undefined;
    } while (cursor && rows.length < MAX_FILTER_CANDIDATES);
    return rows.slice(0, MAX_FILTER_CANDIDATES);
  }

  /** A run's rows (first repetition of each): by a filter over its dataset version, by row ids, or its failures. */
  private async selectRunRows(
    access: WorkspaceAccess,
    queue: QueueRow,
    body: AddReviewItemsRequest,
  ): Promise<{ items: NewItem[]; notFound: string[] }> {
    const run = (await this.runs.find(access.workspaceId, queue.source_id))!;
    const version = await this.versions.findById(access.workspaceId, run.versionId);
    let wanted: Set<string> | null = null;
    if (body.ids) wanted = new Set(body.ids.map((id) => id.toLowerCase()));
    if (body.filter) {
      if (!version) throw new DomainError(ReviewErrors.item_selection_invalid, "The run's dataset version is gone");
      wanted = new Set(
        (await this.readRows(version, body.filter, '/filter', ['_row_id'])).map((r) => String(r._row_id)),
      );
    }
    const metric = body.run_failures?.metric;
    const chosen: NewItem[] = [];
    const seen = new Set<string>();
    for await (const page of this.runs.itemPages(run.id)) {
      for (const item of page) {
        if (seen.has(item.row_id)) continue;
        if (wanted && !wanted.has(item.row_id)) continue;
        if (body.run_failures && (metric ? item.scores?.[metric]?.passed !== false : item.passed !== false)) continue;
        seen.add(item.row_id);
        chosen.push({
          ref: item.row_id,
          context: {
            input: cut(pick(item.data, version?.mapping.input, 'input')),
            expected_output: cut(pick(item.data, version?.mapping.expected_output, 'expected_output')),
            output: cut(item.output),
            passed: item.passed,
            scores: item.scores ?? {},
          },
        });
      }
      if (!wanted && chosen.length >= MAX_FILTER_CANDIDATES) break;
    }
    const items = body.sample ? sample(chosen, body.sample.size, body.sample.seed) : chosen;
    return {
      items: items.slice(0, MAX_ITEMS_PER_REQUEST),
      notFound: body.ids ? [...wanted!].filter((id) => !seen.has(id)) : [],
    };
  }
}

/** `size` of `all` drawn without replacement by the seeded generator, kept in their order: the same seed, the same draw. */
export function sample<T>(all: T[], size: number, seed: number): T[] {
  if (size >= all.length) return all;
  const rng = new Xoshiro128(seed);
  const indices = all.map((_, i) => i);
  for (let i = 0; i < size; i++) {
    const j = i + Math.floor(rng.nextFloat() * (indices.length - i));
    [indices[i], indices[j]] = [indices[j], indices[i]];
  }
  return indices
    .slice(0, size)
    .sort((a, b) => a - b)
    .map((i) => all[i]);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function uuidsOf(ids: string[]): string[] {
  const uuids = ids.filter((id) => UUID.test(id)).map((id) => id.toLowerCase());
  return uuids.length ? uuids : ['00000000-0000-0000-0000-000000000000'];
}

function pick(row: Row, column: string | undefined, fallback: string): unknown {
  return row[column ?? fallback] ?? null;
}

/** A value with its text cut to MAX_CONTEXT_TEXT characters (objects as their JSON). */
function cut(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value.length > MAX_CONTEXT_TEXT ? value.slice(0, MAX_CONTEXT_TEXT) : value;
  if (typeof value === 'object') {
    const text = JSON.stringify(value);
    return text.length > MAX_CONTEXT_TEXT ? text.slice(0, MAX_CONTEXT_TEXT) : value;
  }
  return value;
}

function rowContext(version: DatasetVersionEntity, row: Row): Record<string, unknown> {
  const { _row_id: _, ...data } = row;
  const shown = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, cut(v)]));
  return {
    input: cut(pick(row, version.mapping.input, 'input')),
    expected_output: cut(pick(row, version.mapping.expected_output, 'expected_output')),
    output: cut(row.output ?? null),
    row: shown,
  };
}

/** A trace's (or session's) snapshot: the first root span's input, the last root span's output, its spans in time order. */
function traceContext(key: string, spans: Row[]): Record<string, unknown> {
  const ordered = [...spans].sort((a, b) => String(a.start_time ?? '').localeCompare(String(b.start_time ?? '')));
  const roots = ordered.filter((s) => !s.parent_span_id);
  const first = roots[0] ?? ordered[0];
  const last = roots[roots.length - 1] ?? ordered[ordered.length - 1];
  return {
    [key]: first[key],
    input: cut(first.input ?? null),
    output: cut(last.output ?? null),
    span_count: spans.length,
    spans: ordered.slice(0, MAX_CONTEXT_SPANS).map((s) => ({
      trace_id: s.trace_id,
      span_id: s.span_id,
      parent_span_id: s.parent_span_id ?? null,
      name: s.name,
      kind: s.kind,
      status: s.status,
      start_time: s.start_time,
      duration_ms: s.duration_ms,
      input: cut(s.input ?? null),
      output: cut(s.output ?? null),
      error: cut(s.error ?? null),
    })),
  };
}
