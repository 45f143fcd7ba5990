import { isDeepStrictEqual } from 'node:util';
import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { checkId } from '#libs/traces/conventions.js';
import {
  type CreateTraceFeedbackBatchRequest,
  type FeedbackItem,
  type FeedbackSelection,
  MAX_SELECTION,
  type TraceFeedbackBatchResponse,
  type TraceFeedbackQuery,
  type TraceFeedbackResponse,
  type TraceFeedbackSummary,
} from '../dto/feedback.dto.js';
import { feedbackEquality, FeedbackRepository, type FeedbackRow, type NewFeedbackRow } from './feedback.repository.js';
import { feedbackContent, toFeedbackResponse, toFeedbackSummaries } from '../traces.mapper.js';
import { TraceErrors } from '../traces.errors.js';

/** What a post of feedback answers: the record, and whether it was stored before under its client_key. */
export interface PostedFeedback {
  feedback: TraceFeedbackResponse;
  replayed: boolean;
}

/**
 * End users' feedback on traces: posted by the application's backend (idempotent by
 * `client_key`), listed and filtered, summarised beside a trace version's enrichment, and
 * selected for other families (`traceIdsWithFeedback`).
 */
@Injectable()
export class TraceFeedbackService {
  constructor(
    private readonly feedback: FeedbackRepository,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  /** Stores one feedback, or answers the one its client_key already holds; 409 when that one says something else. */
  async create(access: WorkspaceAccess, caller: Principal, item: FeedbackItem): Promise<PostedFeedback> {
    const { row, created } = await this.feedback.insert(this.newRow(access.workspaceId, caller, item));
    if (
      !created &&
      !isDeepStrictEqual(feedbackContent(row), feedbackContent(this.newRow(row.workspace_id, caller, item)))
    )
      throw conflict(row);
    return { feedback: toFeedbackResponse(row, !created), replayed: !created };
  }

  /**
   * Each item as `create` would take it, in order, in one unit of work: a conflicting item
   * answers its conflict and the others go ahead; a failure of the database stores none of them.
   */
  async createBatch(
    access: WorkspaceAccess,
    caller: Principal,
    body: CreateTraceFeedbackBatchRequest,
  ): Promise<TraceFeedbackBatchResponse> {
    return this.transactions.run(() => this.createEach(access, caller, body));
  }

  private async createEach(
    access: WorkspaceAccess,
    caller: Principal,
    body: CreateTraceFeedbackBatchRequest,
  ): Promise<TraceFeedbackBatchResponse> {
    const items: TraceFeedbackBatchResponse['items'] = [];
    for (const [index, item] of body.items.entries()) {
      try {
        const { feedback, replayed } = await this.create(access, caller, item);
        items.push({
          index,
          outcome: replayed ? 'replayed' : 'created',
          status: replayed ? 200 : 201,
          feedback,
          error_code: null,
        });
      } catch (err) {
        if (!(err instanceof DomainError) || err.code !== TraceErrors.trace_feedback_key_conflict) throw err;
        items.push({ index, outcome: 'conflict', status: 409, feedback: null, error_code: err.code });
      }
    }
    return { items };
  }

  async list(access: WorkspaceAccess, query: TraceFeedbackQuery): Promise<Page<TraceFeedbackResponse>> {
    const value = query.value;
    const { rows, total } = await this.feedback.page(
      access.workspaceId,
      {
        traceId: query.trace_id === undefined ? undefined : storedId(query.trace_id, 32),
        spanId: query.span_id === undefined ? undefined : storedId(query.span_id, 16),
        name: query.name,
        userRef: query.user_ref,
        minValue: query.min_value,
        maxValue: query.max_value,
        createdAfter: query.created_after ? new Date(query.created_after) : undefined,
        createdBefore: query.created_before ? new Date(query.created_before) : undefined,
        equals: value === undefined ? undefined : feedbackEquality(value),
      },
      query.sort === 'created_at' ? 'asc' : 'desc',
      pageWindow(query),
    );
    return pageOf(rows, total, query, (row) => toFeedbackResponse(row, false));
  }

  async get(access: WorkspaceAccess, id: string): Promise<TraceFeedbackResponse> {
    const row = await this.feedback.find(access.workspaceId, id);
    if (!row) throw new NotFoundError('trace_feedback', id);
    return toFeedbackResponse(row, false);
  }

  /** Deletes one feedback and records who did (`trace_feedback.deleted`). Its client_key is free again. */
  async remove(access: WorkspaceAccess, caller: Principal, id: string): Promise<void> {
    await this.transactions.run(async () => {
      const row = await this.feedback.find(access.workspaceId, id);
      if (!row || !(await this.feedback.remove(access.workspaceId, id))) throw new NotFoundError('trace_feedback', id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'trace_feedback.deleted',
        targetType: 'trace_feedback',
        targetId: id,
        details: { trace_id: row.trace_id, span_id: row.span_id, name: row.name, client_key: row.client_key },
      });
    });
  }

  /**
   * The traces (with the span, when the feedback named one) that have feedback called
   * `selection.name`, equal to `value` or with a score within `min` .. `max`: each pair once,
   * ordered by trace id then span id (a trace's own feedback first), at most `limit`
   * (1 .. 10,000). For other families, such as review queues built from "thumbs down".
   */
  async traceIdsWithFeedback(
    workspaceId: string,
    selection: FeedbackSelection,
  ): Promise<Array<{ trace_id: string; span_id: string | null }>> {
    const limit = Math.max(1, Math.min(MAX_SELECTION, Math.floor(selection.limit)));
    return this.feedback.pick(workspaceId, { ...selection, limit });
  }

  /** Per trace, its feedback summed up by name (count, mean score, thumbs up and down); traces without any are left out. */
  async summariesFor(
    workspaceId: string,
    traceIds: string[],
  ): Promise<Map<string, Record<string, TraceFeedbackSummary>>> {
    return toFeedbackSummaries(await this.feedback.countsFor(workspaceId, traceIds));
  }

  private newRow(workspaceId: string, caller: Principal, item: FeedbackItem): NewFeedbackRow {
    const { value } = item;
    return {
      workspace_id: workspaceId,
      trace_id: storedId(item.trace_id, 32),
      span_id: item.span_id === undefined ? null : storedId(item.span_id, 16),
      name: item.name,
      value_kind: typeof value,
      value_number: typeof value === 'number' ? value : null,
      value_boolean: typeof value === 'boolean' ? value : null,
      value_string: typeof value === 'string' ? value : null,
      comment: item.comment ?? null,
      user_ref: item.user_ref ?? null,
      metadata: JSON.stringify(item.metadata ?? {}),
      client_key: item.client_key ?? null,
      created_by: caller.userId,
      api_key_id: caller.apiKey?.id ?? null,
    };
  }
}

/** An id as the traces family stores it (OTLP hex lower-cased); a query's id that is not one is looked up as given. */
function storedId(raw: string, width: 32 | 16): string {
  const checked = checkId(raw, width);
  return checked.ok ? checked.id : raw;
}

function conflict(row: FeedbackRow): DomainError {
  return new DomainError(
    TraceErrors.trace_feedback_key_conflict,
    `client_key ${JSON.stringify(row.client_key)} already holds feedback ${row.id} with other content; a retry sends the same content, new feedback a new key`,
    { feedback_id: row.id },
  );
}
